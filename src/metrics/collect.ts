// What dlock metrics reports, read from Redis: every held lock under the prefix (status's listing)
// and each named key, with its live state and, on one Redis, its totals (counts for all time) and
// what its history stream keeps.

import type { ConnectionConfig } from '../config/index.js';
import {
  failureText,
  HISTORY_MAX,
  type HoldMode,
  isClosed,
  MODES,
  openBackend,
  type StoreClock,
  slotsOf,
  type Totals,
  type UnreadableLock,
} from '../backend/index.js';
import { cut, printable } from '../untrusted.js';
import { historyStats, type HistoryStats } from './history-stats.js';

/**
 * Most locks reported in one run: each costs a history read of up to HISTORY_MAX entries, so a
 * run reads at most MAX_KEYS × HISTORY_MAX entries, one key's at a time. Keys past it (in name
 * order, named keys first) are left out and counted (dlock_metrics_locks_omitted).
 */
export const MAX_KEYS = 1000;

/** One lock as metrics sees it. */
export interface LockSample {
  key: string;
  held: boolean;
  holders: number;
  /** How many may hold it at once: 1 (exclusive), n (--slots); undefined when --shared (no limit). */
  slots: number | undefined;
  /** Waiting in line; undefined with several instances (Redlock keeps no line). */
  waiters: number | undefined;
  /** Holds closed by `release --force` that keep the key closed until their lease ends. */
  closed: number;
  /** undefined when no history is kept (Redlock) or it could not be read. */
  history: HistoryStats | undefined;
  /** Counts for all time; undefined when none are kept (Redlock) or they could not be read. */
  totals: Totals | undefined;
}

export interface Collection {
  locks: LockSample[];
  unreadable: UnreadableLock[];
  omitted: number;
  /** A server's clock from the reads (undefined when nothing was read): the history's times are on it. */
  clock?: StoreClock;
}

/** Read every held lock under the prefix (unless `only`) and each of `named`, at most MAX_KEYS of them. */
export async function collectLocks(
  config: ConnectionConfig,
  named: string[],
  { only = false }: { only?: boolean } = {},
): Promise<Collection> {
  const backend = await openBackend(config);
  try {
    const listing = only ? { held: [], unreadable: [] } : await backend.list();
    const unreadable = [...listing.unreadable];
    const held = new Map(listing.held.map((lock) => [lock.key, lock]));
    const skip = new Set(unreadable.map((lock) => lock.key));
    const wanted = [...new Set([...named, ...held.keys()])].filter((key) => !skip.has(key));
    const keys = wanted.slice(0, MAX_KEYS);
    const locks: LockSample[] = [];
    let clock = listing.held.find((lock) => lock.clock)?.clock;
    for (const key of keys) {
      const lock = backend.lock(key);
      const { verdict, agreed, state, members, ...read } = await lock.read();
      clock ??= read.clock;
      if (verdict === 'unknown') {
        const error = members.flatMap((v) => (v.failure ? [failureText(v.failure)] : [])).join('; ');
        unreadable.push({ key, error });
        continue;
      }
      const all = state ? state.holders : agreed?.holder ? [agreed.holder] : [];
      const closed = all.filter(isClosed).length;
      const holders = all.length - closed;
      const history = await lock.history(HISTORY_MAX);
      if (history && 'failure' in history) unreadable.push({ key, error: `history: ${failureText(history.failure)}` });
      const counted = await lock.totals();
      if (counted && 'failure' in counted) unreadable.push({ key, error: `totals: ${failureText(counted.failure)}` });
      locks.push({
        key,
        held: holders > 0,
        holders,
        closed,
        slots: capacityOf(state?.mode ?? { kind: 'exclusive' }),
        waiters: state?.lineLength,
        history: history && 'events' in history ? historyStats(history.events) : undefined,
        totals: counted && 'totals' in counted ? counted.totals : undefined,
      });
    }
    return { locks, unreadable, omitted: wanted.length - keys.length, ...(clock ? { clock } : {}) };
  } finally {
    backend.close();
  }
}

/** How many may hold the key at once (the kinds table); undefined for --shared. */
function capacityOf(mode: HoldMode): number | undefined {
  return MODES[mode.kind].capacity(slotsOf(mode));
}

/** How many keys the line about forged counts names (the rest are counted). */
const INVALID_NAMED = 5;

/**
 * One line about the counts left out because their field is not a whole number (forged), naming
 * the first keys, each field and what it holds (escaped and cut); undefined when there are none.
 */
export function invalidCountsSummary(locks: LockSample[]): string | undefined {
  const forged = locks.filter((lock) => (lock.totals?.invalid.length ?? 0) > 0);
  if (forged.length === 0) return undefined;
  const total = forged.reduce((sum, lock) => sum + lock.totals!.invalid.length, 0);
  const named = forged.slice(0, INVALID_NAMED).map((lock) => {
    const fields = lock.totals!.invalid.map(({ field, value }) => `${field} "${cut(printable(value), 32)}"`);
    return `${cut(printable(lock.key))}: ${fields.join(', ')}`;
  });
  const more = forged.length - named.length;
  return (
    `${total} ${total === 1 ? 'count' : 'counts'} left out, not whole numbers (forged?): ` +
    named.join('; ') +
    (more > 0 ? `; and ${more} more keys` : '')
  );
}
