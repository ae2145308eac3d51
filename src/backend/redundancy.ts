// Redundancy of a hold on a quorum of members: which members failed the last round that still reached a
// quorum (an acquisition or a renewal). The operator hears when that set changes, not at every
// renewal: "degraded" names the failing members and why, "restored" says all answer again.

import type { MemberFailure } from './failure.js';

/** What the report needs of a failing instance. */
type Failing = Pick<MemberFailure, 'label' | 'reason'>;

export type RedundancyChange = { kind: 'degraded'; failing: Failing[] } | { kind: 'restored' };

export class RedundancyWatch {
  /** The labels of the instances reported failing, sorted; empty while all answer. */
  private reported: string[] = [];

  /** The change to report after a successful round with these failures, if any. */
  observe(failures: Failing[]): RedundancyChange | undefined {
    const labels = [...new Set(failures.map(({ label }) => label))].sort();
    // Another reason for the same instances (refused, then "not connected") is no news.
    if (labels.join('\n') === this.reported.join('\n')) return undefined;
    this.reported = labels;
    return labels.length === 0 ? { kind: 'restored' } : { kind: 'degraded', failing: failures };
  }
}
