// Release on every instance in parallel: owner-checked, and retried until --connect-timeout
// runs out on an instance whose release failed (compare-and-delete by owner is idempotent), or
// within a shorter bound the caller gives (after a loss: what is left of the lease, no retry).

import { releaseScript } from './lock/release.js';
import { instanceFailure, type Instance, type MemberFailure } from './client/client.js';
import { now, sleep } from '../../clock.js';
import type { ReleaseOptions as HandleReleaseOptions, MemberRelease, ReleaseOutcome } from '../../backend/backend.js';
import type { LockSet } from './lockset.js';

/** The face's release options, and what the engine's own callers add (an attempt's undo, a line's wake-up). */
export interface ReleaseOptions extends HandleReleaseOptions {
  /** Release only where `which[i]` is true (default: everywhere). */
  which?: boolean[];
  /** false: do not wake the waiters (see releaseScript). */
  notify?: boolean;
  /** Stop retrying when this aborts (the last attempt sent still runs). */
  signal?: AbortSignal;
}

/** Release where asked; one entry per instance released on, in the lock set's order. */
export async function releaseAll(set: LockSet, options: ReleaseOptions = {}): Promise<MemberRelease[]> {
  const chosen = set.instances.filter((_, i) => !options.which || options.which[i]);
  return Promise.all(
    chosen.map(async (instance) => ({
      label: instance.target.label,
      outcome: await releaseWithRetry(set, instance, options),
    })),
  );
}

/** One instance: retry a failed release (error, timeout, dropped connection) until the bound. */
async function releaseWithRetry(set: LockSet, instance: Instance, options: ReleaseOptions): Promise<ReleaseOutcome> {
  const { notify = true, signal, record, retry = true, fence } = options;
  const deadline = now() + (options.boundMs ?? set.connectTimeoutMs);
  const input = { owner: set.owner, notify, record, fence };
  let replyLost: string | undefined;
  let firstFailure: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const timeoutMs = Math.max(1, Math.min(set.timeoutMs, Math.floor(deadline - now())));
    try {
      const reply = await releaseScript.run(instance.client, set.keys, input, timeoutMs);
      if (reply === 'forced') return { kind: 'not-ours', forced: true };
      if (reply === 'not-ours')
        return replyLost === undefined ? { kind: 'not-ours' } : { kind: 'released-or-expired', reason: replyLost };
      return { kind: 'released', notified: reply !== 'unannounced' };
    } catch (error) {
      const failure = instanceFailure(instance.target.label, error);
      const reason = (firstFailure ??= failure.reason);
      // An error reply means the script stopped before its DEL; no reply may hide a DEL.
      if (!failure.errorReply) replyLost ??= failure.reason;
      // A permission the ACL lacks does not come within the bound: say so at once.
      const pauseMs = Math.min(releaseRetryMs(attempt), deadline - now() - MIN_ATTEMPT_MS);
      if (!retry || pauseMs <= 0 || signal?.aborted || failure.permanent) return { kind: 'failed', reason };
      await sleep(pauseMs, signal);
      if (signal?.aborted) return { kind: 'failed', reason };
    }
  }
}

/** An attempt with less time than this left is not worth sending. */
const MIN_ATTEMPT_MS = 10;

/** 25ms doubling to 400ms, jittered: about the client's own reconnect delay. */
function releaseRetryMs(attempt: number, random = Math.random()): number {
  return Math.round(Math.min(25 * 2 ** attempt, 400) * (0.5 + random));
}

/** The instances where the release failed, and why. */
export function releaseFailures(releases: MemberRelease[]): Pick<MemberFailure, 'label' | 'reason'>[] {
  return releases.flatMap(({ label, outcome }) =>
    outcome.kind === 'failed' ? [{ label, reason: outcome.reason }] : [],
  );
}
