// The locks the enclosing dlocks hold, as the environment describes them: DLOCK_KEY, DLOCK_TOKEN,
// DLOCK_FENCING_TOKEN, DLOCK_TTL_MS and DLOCK_SLOT the innermost one (the lock of the nearest
// `dlock run` or section), DLOCK_HELD the others, space-separated `key=token,fence,ttl_ms,slot`
// entries. A hint only: a nested run or acquire checks with the store that the token holds its
// key (LockHandle.heldBy), renew and release are owner-checked there. What is malformed is left
// out, never obeyed; the parse is linear in the variable's length.

import { validateKey, type Env } from './options.js';

/** One lock an enclosing dlock holds, as the environment says (each field well-formed, not verified). */
export interface EnclosingLock {
  key: string;
  /** 32 hex digits. */
  token: string;
  /** Digits, or "" when the environment did not say. */
  fence: string;
  /** DLOCK_TTL_MS: digits, or "". */
  ttlMs: string;
  /** DLOCK_SLOT: digits, or "" (no slot). */
  slot: string;
}

const TOKEN = /^[0-9a-f]{32}$/;
/** A fence, a lease length or a slot: digits (at most 20), or nothing. */
const NUMBER = /^\d{0,20}$/;

/** The innermost lock (DLOCK_KEY, DLOCK_TOKEN, …), when DLOCK_KEY and DLOCK_TOKEN are well-formed. */
export function innermostLock(env: Env): EnclosingLock | undefined {
  const { DLOCK_KEY: key, DLOCK_TOKEN: token, DLOCK_FENCING_TOKEN: fence = '', DLOCK_TTL_MS: ttlMs = '' } = env;
  const slot = env.DLOCK_SLOT ?? '';
  if (key === undefined || !isKey(key) || token === undefined || !TOKEN.test(token)) return undefined;
  const number = (value: string) => (NUMBER.test(value) ? value : '');
  return { key, token, fence: number(fence), ttlMs: number(ttlMs), slot: number(slot) };
}

/** The other locks enclosing dlocks hold (DLOCK_HELD): its well-formed entries, the first of each key. */
export function heldLocks(env: Env): EnclosingLock[] {
  const seen = new Set<string>();
  const locks: EnclosingLock[] = [];
  for (const entry of (env.DLOCK_HELD ?? '').split(/[ \t\n]+/)) {
    const lock = parseEntry(entry);
    if (lock && !seen.has(lock.key)) {
      seen.add(lock.key);
      locks.push(lock);
    }
  }
  return locks;
}

/** The lock an enclosing dlock holds on `key`: the innermost when DLOCK_KEY names it, else its DLOCK_HELD entry. */
export function enclosingLock(env: Env, key: string): EnclosingLock | undefined {
  const innermost = innermostLock(env);
  if (env.DLOCK_KEY === key) return innermost;
  return heldLocks(env).find((lock) => lock.key === key);
}

/**
 * DLOCK_HELD for a command whose innermost lock is `key`: the caller's innermost lock (unless on
 * `key`), then the caller's DLOCK_HELD, without `key` and each key once.
 */
export function heldAround(env: Env, key: string): EnclosingLock[] {
  const innermost = innermostLock(env);
  const around = [...(innermost ? [innermost] : []), ...heldLocks(env)];
  const seen = new Set<string>([key]);
  return around.filter((lock) => !seen.has(lock.key) && Boolean(seen.add(lock.key)));
}

/** DLOCK_HELD's text for these locks ("" for none). */
export function heldText(locks: EnclosingLock[]): string {
  return locks.map(({ key, token, fence, ttlMs, slot }) => `${key}=${token},${fence},${ttlMs},${slot}`).join(' ');
}

/** DLOCK_NESTED's tokens: the well-formed ones. */
export function nestedTokens(env: Env): string[] {
  return (env.DLOCK_NESTED ?? '').split(/[ \t\n]+/).filter((token) => TOKEN.test(token));
}

/** `key=token,fence,ttl_ms,slot`, read from the right (a key may hold '=' and ','); undefined when malformed. */
function parseEntry(entry: string): EnclosingLock | undefined {
  const slotAt = entry.lastIndexOf(',');
  const ttlAt = entry.lastIndexOf(',', slotAt - 1);
  const fenceAt = ttlAt > 0 ? entry.lastIndexOf(',', ttlAt - 1) : -1;
  if (fenceAt < 0) return undefined;
  const tokenAt = entry.lastIndexOf('=', fenceAt - 1);
  if (tokenAt <= 0) return undefined;
  const [key, token] = [entry.slice(0, tokenAt), entry.slice(tokenAt + 1, fenceAt)];
  const [fence, ttlMs, slot] = [
    entry.slice(fenceAt + 1, ttlAt),
    entry.slice(ttlAt + 1, slotAt),
    entry.slice(slotAt + 1),
  ];
  if (!TOKEN.test(token) || ![fence, ttlMs, slot].every((n) => NUMBER.test(n)) || !isKey(key)) return undefined;
  return { key, token, fence, ttlMs, slot };
}

/** A key dlock accepts (validateKey: printable, no whitespace, no { or }, not too long). */
function isKey(key: string): boolean {
  try {
    validateKey(key);
    return true;
  } catch {
    return false;
  }
}
