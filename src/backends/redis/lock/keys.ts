// The Redis key layout of one lock (docs/reference/redis-layout.md). Every key
// shares the hash tag {<key>}, so a lock lives in one Cluster slot and its scripts may touch
// all of it.

export interface LockKeys {
  /** Hash with the holder (owner, fence, host, pid, cmd, since_ms, ttl_ms), or the holders of --slots/--shared. */
  lock: string;
  /** Fencing counter: never expires, never deleted by dlock. */
  fence: string;
  /** Pub/sub channel published on release (Redlock waiters listen to it). */
  released: string;
  /** Sorted set: each holder of --slots/--shared → when its lease ends (server ms). */
  holders: string;
  /** Sorted set: the line, each waiter's owner token → its score (priority band and arrival order: enter.lua). */
  line: string;
  /** Sorted set: each waiter → when its place in line lapses unless renewed (server ms). */
  lineExpiry: string;
  /** Hash: each waiter → its details (JSON: mode, slots, host, pid, cmd, since_ms, priority, supersede ticket). */
  lineInfo: string;
  /** A waiter listens on this prefix + its owner token: woken when it may enter. */
  wakePrefix: string;
  /**
   * --once-per: a run succeeded this window (JSON of host, pid, cmd, fence, started_ms, finished_ms), PX to the
   * window's end.
   */
  done: string;
  /** Stream: the key's history (scripts.ts HISTORY), capped. */
  history: string;
  /** Hash: the key's counts for all time (lua/totals.lua): never expires, never deleted by dlock. */
  totals: string;
  /** Hash: --supersede's last ticket (`seq`) and who took it (`by`): never expires, never deleted by dlock. */
  supersede: string;
}

export function lockKeys(prefix: string, key: string): LockKeys {
  const lock = `${prefix}{${key}}`;
  return {
    lock,
    fence: `${lock}:fence`,
    released: `${lock}:released`,
    holders: `${lock}:holders`,
    line: `${lock}:line`,
    lineExpiry: `${lock}:line:expiry`,
    lineInfo: `${lock}:line:info`,
    wakePrefix: `${lock}:wake:`,
    done: `${lock}:done`,
    history: `${lock}:history`,
    totals: `${lock}:totals`,
    supersede: `${lock}:supersede`,
  };
}

/** The user's key back from a lock hash's name, or undefined if it is not one of ours. */
export function keyFromLockName(prefix: string, name: string): string | undefined {
  if (!name.startsWith(`${prefix}{`) || !name.endsWith('}')) return undefined;
  return name.slice(prefix.length + 1, -1);
}

/** A SCAN MATCH pattern for every lock hash under `prefix`, glob characters escaped. */
export function lockPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}{*}`;
}
