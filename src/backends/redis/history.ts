// A key's history stream and totals, read on the one Redis that keeps them (a Redlock quorum keeps none).

import { readHistory, type HistoryEntry } from './lock/history.js';
import type { LockKeys } from './lock/keys.js';
import { readTotals } from './lock/totals.js';
import { instanceFailure, reconnected, UnreadReplyError, type MemberFailure } from './client/client.js';
import type { LockSet } from './lockset.js';
import { unavailable } from './open.js';
import { type Totals } from '../../backend/totals.js';

/** The newest `count` entries of the set's key, newest first; 69 when the instance cannot be read. */
export async function historyOf(set: LockSet, count: number): Promise<HistoryEntry[]> {
  const instance = set.instances[0];
  if (!instance) throw unavailable(1, set.unreachable);
  return readHistory(instance, set.keys, count, set.timeoutMs).catch((error: unknown) => {
    throw unavailable(1, [instanceFailure(instance.target.label, error)]);
  });
}

/** The newest `count` entries, or [] where there is no history or it cannot be read (an estimate's input). */
export async function recentHistory(set: LockSet, count: number): Promise<HistoryEntry[]> {
  const instance = set.instances[0];
  if (!set.caps.history || !instance) return [];
  return readHistory(instance, set.keys, count, set.timeoutMs).catch(() => []);
}

/** Another key's newest `count` entries on the set's Redis (dlock metrics); undefined without a history. */
export async function historyOfKey(
  set: LockSet,
  keys: LockKeys,
  count: number,
): Promise<{ entries: HistoryEntry[] } | { failure: MemberFailure } | undefined> {
  const instance = set.instances[0];
  if (!set.caps.history || !instance) return undefined;
  return readHistory(instance, keys, count, set.timeoutMs).then(
    (entries) => ({ entries }),
    async (error: unknown) => {
      // A forged stream too large to read closed the connection: the next key's reads wait for it.
      if (error instanceof UnreadReplyError) await reconnected(instance.client, set.timeoutMs);
      return { failure: instanceFailure(instance.target.label, error) };
    },
  );
}

/** Another key's totals on the set's Redis (dlock metrics' counters); undefined without a history (Redlock). */
export async function totalsOfKey(
  set: LockSet,
  keys: LockKeys,
): Promise<{ totals: Totals } | { failure: MemberFailure } | undefined> {
  const instance = set.instances[0];
  if (!set.caps.history || !instance) return undefined;
  return readTotals(instance, keys, set.timeoutMs).then(
    (totals) => ({ totals }),
    (error: unknown) => ({ failure: instanceFailure(instance.target.label, error) }),
  );
}
