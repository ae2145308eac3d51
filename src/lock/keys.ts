// The Redis key layout of one lock (SPEC "Redis layout"). Every key shares the hash
// tag {<key>}, so a lock lives in one Cluster slot and its scripts may touch all of it.

export interface LockKeys {
  /** Hash with the holder: owner, fence, host, pid, cmd, since_ms, ttl_ms. */
  lock: string;
  /** Fencing counter: never expires, never deleted by dlock. */
  fence: string;
  /** Pub/sub channel published on release. */
  released: string;
}

export function lockKeys(prefix: string, key: string): LockKeys {
  const lock = `${prefix}{${key}}`;
  return { lock, fence: `${lock}:fence`, released: `${lock}:released` };
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
