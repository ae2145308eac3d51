// One acquisition attempt across the lock set (Redlock, with the two-round fencing token).

import { acquireOn, type AcquireReply, type HolderMeta } from '../lock/acquire.js';
import { maxFence, raiseFenceOn } from '../lock/fence.js';
import { now } from '../timeout.js';
import { fanOut, type LockSet } from './lockset.js';
import { driftMs, tally, validityMs } from './quorum.js';
import { releaseAll } from './release.js';

export type Attempt =
  | { kind: 'acquired'; fence: string; startedAt: number }
  /** Held by someone else (or a split vote): try again in about `retryInMs`. */
  | { kind: 'busy'; retryInMs: number }
  /** Too few instances answered to ever reach a quorum. */
  | { kind: 'unavailable'; errors: string[] };

/** Try once: round 1 acquires and collects counters, round 2 raises them to the max. */
export async function tryAcquire(set: LockSet, meta: HolderMeta): Promise<Attempt> {
  const startedAt = now();
  const round1 = await fanOut<AcquireReply>(set, (i) => acquireOn(i, set.keys, set.owner, set.ttlMs, meta, set.timeoutMs), (r) => r.acquired);
  const verdict = tally(round1.outcomes, set.total);

  if (verdict === 'won' && validityMs(set.ttlMs, startedAt, now()) > 0) {
    const fences = round1.values.flatMap((r) => (r?.acquired ? [r.fence] : []));
    const fence = fences.reduce(maxFence);
    if (set.total === 1 || (await raiseFences(set, round1.values, fence))) {
      if (validityMs(set.ttlMs, startedAt, now()) > 0) return { kind: 'acquired', fence, startedAt };
    }
  }

  // Not ours: undo every partial hold (errored instances too: the request may have landed).
  await releaseAll(set, round1.outcomes.map((o) => o !== 'no'));
  if (tally(round1.outcomes, set.total) === 'unavailable') return { kind: 'unavailable', errors: round1.errors };
  const pttls = round1.values.flatMap((r) => (r && !r.acquired && r.pttlMs > 0 ? [r.pttlMs] : []));
  // A split vote (no one has a quorum) resolves after a short random back-off.
  // A lock without a TTL (not one of ours) is only ever released: wait for that.
  const retryInMs = verdict !== 'refused' ? splitVoteBackoff(set.ttlMs) : pttls.length > 0 ? Math.min(...pttls) : Infinity;
  return { kind: 'busy', retryInMs };
}

/** Round 2: counter = max(counter, T) on every instance we hold; true if a quorum did. */
async function raiseFences(set: LockSet, replies: (AcquireReply | undefined)[], fence: string): Promise<boolean> {
  const held = new Set(set.instances.filter((_, i) => replies[i]?.acquired));
  const round2 = await fanOut(set, (i) => (held.has(i) ? raiseFenceOn(i, set.keys, set.owner, fence, set.timeoutMs) : Promise.resolve(false)), (ok) => ok);
  return tally(round2.outcomes, set.total) === 'won';
}

function splitVoteBackoff(ttlMs: number): number {
  return Math.min(driftMs(ttlMs) * 2, 50) * (0.5 + Math.random());
}
