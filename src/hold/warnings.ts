// What `dlock run` says when Redis instances fail but the lock goes on: a held Redlock that
// lost redundancy (once per change of the failing set), and a wait riding out an outage.

import { formatDuration } from '../duration.js';
import type { Logger } from '../log.js';
import { failureText } from '../lockset/lockset.js';
import { quorumSize } from '../lockset/quorum.js';
import type { RedundancyChange } from '../lockset/redundancy.js';

export function logRedundancy(log: Logger, key: string, fence: string, total: number, change: RedundancyChange | undefined): void {
  if (!change) return;
  if (change.kind === 'restored') {
    log.event('restored', { key, fence, instances: total }, `${key} is held on all ${total} Redis instances again`);
    return;
  }
  const { failing } = change;
  const answered = total - failing.length;
  const quorum = quorumSize(total);
  const slack = answered - quorum;
  const errors = failing.map(failureText).join('; ');
  log.event(
    'degraded',
    { key, fence, instances: total, answered, quorum, failing: failing.map(({ label }) => label).join(' '), error: errors },
    `${key} is held on ${answered} of ${total} Redis instances (${quorum} needed; ${slack === 0 ? 'one more failure loses the lock' : `${slack} more may fail`}); failing: ${errors}`,
  );
}

export function logOutage(log: Logger, key: string, waitMs: number | undefined, errors: string[]): void {
  const until = waitMs === undefined ? 'as long as it takes (no --wait)' : `until --wait ${formatDuration(waitMs)} runs out`;
  log.event('outage', { key, error: errors.join('; ') }, `Redis is unreachable while waiting for ${key} (${errors.join('; ')}); retrying ${until}`);
}

export function logOutageOver(log: Logger, key: string): void {
  log.event('restored', { key }, `Redis answers again; still waiting for ${key}`);
}
