// A key's history stream, totals and --once-per done mark, read on the one Redis that keeps them (a Redlock
// quorum keeps none).

import { readHistory } from './lock/history.js';
import type { LockKeys } from './lock/keys.js';
import { readTotals } from './lock/totals.js';
import { instanceFailure, reconnected, UnreadReplyError } from './client/client.js';
import type { LockSet } from './lockset.js';
import type { DoneRead, HistoryRead, TotalsRead } from '../../backend/backend.js';
import { withTimeout } from '../../clock.js';
import { parseDoneMark } from './lock/replies.js';

/** The newest `count` events of the lock at `keys` on the set's Redis, newest first; undefined without a history. */
export async function historyOfKey(set: LockSet, keys: LockKeys, count: number): Promise<HistoryRead | undefined> {
  const instance = set.instances[0];
  if (!set.caps.history || !instance) return undefined;
  return readHistory(instance, keys, count, set.timeoutMs).then(
    (events) => ({ events }),
    async (error: unknown) => {
      // A forged stream too large to read closed the connection: the next key's reads wait for it.
      if (error instanceof UnreadReplyError) await reconnected(instance.client, set.timeoutMs);
      return { failure: instanceFailure(instance.target.label, error) };
    },
  );
}

/** The totals of the lock at `keys` on the set's Redis; undefined without a history (Redlock). */
export async function totalsOfKey(set: LockSet, keys: LockKeys): Promise<TotalsRead | undefined> {
  const instance = set.instances[0];
  if (!set.caps.history || !instance) return undefined;
  return readTotals(instance, keys, set.timeoutMs).then(
    (totals) => ({ totals }),
    (error: unknown) => ({ failure: instanceFailure(instance.target.label, error) }),
  );
}

/**
 * The --once-per done mark of the lock at `keys` (GET, PTTL and TIME, as enter.lua reads it); `done` undefined
 * when none is set. Undefined where no mark is kept (Redlock).
 */
export async function doneMarkOfKey(set: LockSet, keys: LockKeys): Promise<DoneRead | undefined> {
  const instance = set.instances[0];
  if (!set.caps.oncePer || !instance) return undefined;
  const { client } = instance;
  const read = Promise.all([client.call('GET', keys.done), client.call('PTTL', keys.done), client.call('TIME')]);
  return withTimeout(read, set.timeoutMs).then(
    ([raw, left, time]) => {
      if (raw === null || raw === undefined) return { done: undefined };
      const seconds = Array.isArray(time) ? Number(time[0]) : NaN;
      const micros = Array.isArray(time) ? Number(time[1]) : NaN;
      if (typeof raw !== 'string' || typeof left !== 'number' || !Number.isFinite(seconds + micros))
        throw new Error('GET, PTTL, TIME: an unexpected reply');
      // No expiry (-1: a mark set by hand) is done for good; -2: gone between the two reads.
      if (left === -2) return { done: undefined };
      const leftMs = left === -1 ? Number.MAX_SAFE_INTEGER : left;
      return { done: parseDoneMark(raw, leftMs, seconds * 1000 + Math.floor(micros / 1000)) };
    },
    (error: unknown) => ({ failure: instanceFailure(instance.target.label, error) }),
  );
}
