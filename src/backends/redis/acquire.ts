// One acquisition attempt across the lock set (Redlock, with the two-round fencing token).

import { acquireScript, type AcquireReply } from './lock/acquire.js';
import { maxFence, raiseFenceScript } from './lock/fence.js';
import type { HolderKind } from '../../backend/mode.js';
import { now } from '../../clock.js';
import { fanOut, notWith, type FanOut, type MemberFailure, type LockSet } from './lockset.js';
import { quorumSize, tally } from './quorum.js';
import { driftMs, validityMs } from '../../timing.js';
import { releaseAll } from './release.js';
import type { MemberRelease } from '../../backend/backend.js';
import { type HolderMeta, type DoneMark, type Superseder } from '../../backend/holder.js';

/** Undoing a failed attempt: the releases, and a way to stop retrying them (a new attempt is under way). */
export interface Undo {
  done: Promise<MemberRelease[]>;
  stop(): void;
}

export type Attempt =
  /** `failures`: the instances that are not ours (a quorum is). */
  | { kind: 'acquired'; fence: string; slot?: number; startedAt: number; failures: MemberFailure[] }
  /**
   * Held by someone else, or a split vote: try again in about `retryInMs`. `place`: in line, 1 = next
   * (0: not in line, final); `ticket`: --supersede's, given by the line (one instance).
   */
  | { kind: 'busy'; retryInMs: number; place?: number; undo: Undo; ticket?: string }
  /** The key is in use in another mode (exclusive/shared vs --slots) or with another n. */
  | { kind: 'mismatch'; usedAs: HolderKind; slots: number; holders: number; waiters: number }
  /** --once-per: a run succeeded within its window (one instance only). */
  | { kind: 'done'; done: DoneMark }
  /** --supersede: a newer --supersede waiter took our place (one instance only). */
  | { kind: 'superseded'; by: Superseder }
  /** Too few instances answered to ever reach a quorum, or one refused for good (an ACL). */
  | { kind: 'unavailable'; errors: MemberFailure[]; undo: Undo };

/** Try once: round 1 acquires and collects counters, round 2 raises them to the max. */
export async function tryAcquire(set: LockSet, meta: HolderMeta): Promise<Attempt> {
  const startedAt = now();
  const round1 = await fanOut<AcquireReply>(
    set,
    (i) => acquireScript.run(i.client, set.keys, { owner: set.owner, ttlMs: set.ttlMs, meta }, set.timeoutMs),
    (r) => r.acquired,
  );
  const verdict = tally(round1.outcomes, set.total);
  let round2: FanOut<boolean> | undefined;

  if (verdict === 'won' && validityMs(set.ttlMs, startedAt, now()) > 0) {
    const fences = round1.values.flatMap((r) => (r?.acquired ? [r.fence] : []));
    const fence = fences.reduce(maxFence);
    round2 = await raiseFences(set, round1.values, fence);
    if (!round2 || tally(round2.outcomes, set.total) === 'won') {
      if (validityMs(set.ttlMs, startedAt, now()) > 0)
        return { kind: 'acquired', fence, startedAt, failures: notWith(set, round1, 'held by another owner') };
    }
  }

  // Not ours: undo every partial hold (errored instances too, unless the server answered with
  // an error: the request may have landed and only its reply been lost). Only a quorum of ours can have turned waiters
  // away, so only then
  // are they woken. Errored instances are released in the background, retried until
  // --connect-timeout: a hung one must not hold up the next attempt; the caller awaits `undo`.
  const notify = verdict === 'won';
  const stopped = new AbortController();
  const errored = releaseAll(set, {
    which: round1.outcomes.map((o, i) => o === 'error' && !round1.failed[i]?.errorReply),
    notify,
    signal: stopped.signal,
  });
  const held = await releaseAll(set, {
    which: round1.outcomes.map((o) => o === 'yes'),
    notify,
    signal: stopped.signal,
  });
  const undo: Undo = { done: errored.then((late) => [...held, ...late]), stop: () => stopped.abort() };
  // Round 2 refused for good (an ACL without +set): retrying would only raise the counters.
  const refused = round2?.failures.filter(({ permanent }) => permanent) ?? [];
  if (refused.length > 0) return { kind: 'unavailable', errors: refused, undo };
  if (verdict === 'unavailable') return { kind: 'unavailable', errors: round1.failures, undo };
  return { kind: 'busy', retryInMs: retryInMsFor(set, round1.values), undo };
}

/**
 * When to try again. Someone holds a quorum: when its lease runs out (its release wakes us
 * sooner); a lock without a TTL (not one of ours) is only ever released, so wait for that.
 * Nobody does (a split vote between contenders): after a short random back-off.
 */
function retryInMsFor(set: LockSet, replies: (AcquireReply | undefined)[]): number {
  const pttlsByOwner = new Map<string, number[]>();
  for (const reply of replies) {
    if (reply && !reply.acquired)
      pttlsByOwner.set(reply.owner, [...(pttlsByOwner.get(reply.owner) ?? []), reply.pttlMs]);
  }
  for (const pttls of pttlsByOwner.values()) {
    if (pttls.length < quorumSize(set.total)) continue;
    const expiring = pttls.filter((pttl) => pttl > 0);
    return expiring.length > 0 ? Math.min(...expiring) : Infinity;
  }
  return splitVoteRetryMs(set.ttlMs);
}

/** Round 2: counter = max(counter, T) on every instance we hold (won when a quorum did). */
function raiseFences(set: LockSet, replies: (AcquireReply | undefined)[], fence: string): Promise<FanOut<boolean>> {
  const held = new Set(set.instances.filter((_, i) => replies[i]?.acquired));
  const raise = { owner: set.owner, fence };
  return fanOut(
    set,
    (i) => (held.has(i) ? raiseFenceScript.run(i.client, set.keys, raise, set.timeoutMs) : Promise.resolve(false)),
    (ok) => ok,
  );
}

function splitVoteRetryMs(ttlMs: number): number {
  return Math.min(driftMs(ttlMs) * 2, 50) * (0.5 + Math.random());
}
