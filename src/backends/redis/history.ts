// A key's history stream and totals, read on the one Redis that keeps them (a Redlock quorum keeps none).

import { readHistory } from './lock/history.js';
import type { LockKeys } from './lock/keys.js';
import { readTotals } from './lock/totals.js';
import { instanceFailure, reconnected, UnreadReplyError } from './client/client.js';
import type { LockSet } from './lockset.js';
import type { HistoryRead, TotalsRead } from '../../backend/backend.js';

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
