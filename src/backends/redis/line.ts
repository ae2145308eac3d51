// One attempt in line on a single instance (a server, a Sentinel-managed master or a Cluster):
// take the lock if our turn has come, else keep (or take) a place in line. Redlock (several
// instances) has no line: see acquire.ts.

import { enterScript, leaveScript, type Asked } from './lock/line.js';
import { PLACE_RENEW_MS } from './lock/limits.js';
import { instanceFailure } from './client/client.js';
import { now } from '../../clock.js';
import type { Attempt, Undo } from './acquire.js';
import type { MemberFailure, LockSet } from './lockset.js';
import { type HolderMeta } from '../../backend/holder.js';

/** Nothing to undo: a lost reply is found again by the next attempt ("already ours"), or undone when the wait ends. */
const NOTHING: Undo = { done: Promise.resolve([]), stop: () => {} };

/**
 * `join`: wait in line (false with --no-wait). `replyLost` is set when a request may have
 * landed without its reply reaching us: it may hold the lock, which the caller then releases
 * if the wait ends without it.
 */
export async function tryEnter(
  set: LockSet,
  meta: HolderMeta,
  join: boolean,
  replyLost: { value: boolean },
  recorded: Asked,
): Promise<Attempt> {
  const instance = set.instances[0];
  if (!instance) return { kind: 'unavailable', errors: set.unreachable, undo: NOTHING };
  const startedAt = now();
  try {
    const asked = { owner: set.owner, ttlMs: set.ttlMs, meta, mode: set.mode, join, ...recorded };
    const reply = await enterScript.run(instance.client, set.keys, asked, set.timeoutMs);
    if (reply.acquired) return { kind: 'acquired', fence: reply.fence, slot: reply.slot, startedAt, failures: [] };
    if ('done' in reply) return { kind: 'done', done: { ...reply.done, where: set.keys.done } };
    if ('supersededBy' in reply) return { kind: 'superseded', by: reply.supersededBy };
    if ('mismatch' in reply) {
      const { kind: usedAs, slots, holders, waiters } = reply.mismatch;
      return { kind: 'mismatch', usedAs, slots, holders, waiters };
    }
    // The head polls when a holder's lease would run out; everyone renews their place.
    const retryInMs = Math.min(PLACE_RENEW_MS, reply.nextInMs ?? Infinity);
    return { kind: 'busy', retryInMs, place: reply.place, undo: NOTHING, ticket: reply.ticket };
  } catch (error) {
    const failure = instanceFailure(instance.target.label, error);
    if (!failure.errorReply) replyLost.value = true;
    return { kind: 'unavailable', errors: [failure], undo: NOTHING };
  }
}

/** What the history records of a waiter leaving the line. */
export type LeaveRecord = 'busy' | 'left' | '';

/**
 * Leave the line (bounded): a waiter that gives up wakes the one behind it at once.
 * `record`: what the history says ("busy": the wait ran out, "left": interrupted, "": nothing).
 * Returns why it could not: the place then lapses within its lease, and a refusal (a grant
 * missing, +hdel or +zrem) is the caller's to report.
 */
export async function leaveLine(
  set: LockSet,
  record: LeaveRecord = '',
  waitedMs = 0,
): Promise<MemberFailure | undefined> {
  const instance = set.instances[0];
  if (!instance) return undefined;
  try {
    await leaveScript.run(instance.client, set.keys, { owner: set.owner, record, waitedMs }, set.timeoutMs);
    return undefined;
  } catch (error) {
    return instanceFailure(instance.target.label, error);
  }
}
