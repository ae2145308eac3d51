// The Lua scripts as sent to Redis: each file of lua/ (bundled as text) with the shared Lua it
// uses prefixed. Each script takes every key it touches in KEYS (Cluster-safe), checks their types
// before it writes (common.lua: an error reply means nothing changed), compares the owner token
// before it writes, and returns counters as strings (64-bit safe). Every string exported here is
// a script: scripts/build.mjs makes their SHA-1s (the EVALSHA names) at build time.

import {
  HOLD_BUCKETS_MS,
  INSPECT_MAX_BYTES,
  MAX_OBSERVED_MS,
  LINE_SCAN_MAX,
  PLACE_LEASE_LIMIT_MS,
  SUPERSEDE_SCAN_MAX,
  TICKET_SPAN,
  WAIT_BUCKETS_MS,
} from './limits.js';
import acquire from './lua/acquire.lua';
import common from './lua/common.lua';
import enter from './lua/enter.lua';
import extendHolder from './lua/extend-holder.lua';
import extend from './lua/extend.lua';
import forceRelease from './lua/force-release.lua';
import inspect from './lua/inspect.lua';
import leave from './lua/leave.lua';
import lineLib from './lua/line-lib.lua';
import raiseFence from './lua/raise-fence.lua';
import release from './lua/release.lua';
import retake from './lua/retake.lua';
import totals from './lua/totals.lua';
import { HISTORY_MAX } from '../../../backend/history.js';
import { PRIORITY_MAX } from '../../../backend/holder.js';

/** A file's Lua without its opening comment (what it takes and returns is written for readers, not for Redis). */
function body(file: string): string {
  return file.replace(/^(?:--.*\n)+\n*/, '');
}

/**
 * HISTORY: the scripts that do the work append one entry per event to the key's stream
 * `<prefix>{<key>}:history` in the same call (no extra round trip), capped exactly at
 * HISTORY_MAX entries (XADD MAXLEN). Best effort: an XADD the server refuses (an ACL without
 * +xadd, a foreign key of another type there) never fails the lock operation. Every entry has
 * `event`, `host`, `pid`, `cmd`; its ID is the server's time in ms. Events and their own fields:
 *   acquired  fence, slot, waited_ms                 released  fence, slot, exit, held_ms
 *   lost      fence, why (expired|forced|taken)      forced    fence, slot, by_host, by_pid, now
 *   busy      waited_ms, why (held or line: turned away by -n; wait: its --wait ran out)
 *   done      waited_ms, until_ms (turned away by --once-per: a run succeeded in this window)
 *   left      waited_ms (a waiter interrupted while in line)
 *   superseded  waited_ms, by_host, by_pid, by_cmd (a newer --supersede waiter took its place; recorded by the
 *             superseded waiter when it learns it, with who took the last ticket)
 * One instance only (a server, Sentinel, Cluster): with Redlock nothing is recorded.
 *
 * TOTALS: with each entry the same call adds to the key's counts for all time, the hash
 * `<prefix>{<key>}:totals` (lua/totals.lua), which no cap trims: dlock metrics' counters.
 */
const LIMITS =
  `local HISTORY_MAX, PLACE_LEASE_LIMIT_MS, INSPECT_MAX_BYTES = ${HISTORY_MAX}, ${PLACE_LEASE_LIMIT_MS}, ` +
  `${INSPECT_MAX_BYTES}\n` +
  `local PRIORITY_MAX, TICKET_SPAN, LINE_SCAN_MAX = ${PRIORITY_MAX}, ${TICKET_SPAN}, ${LINE_SCAN_MAX}\n` +
  `local SUPERSEDE_SCAN_MAX = ${SUPERSEDE_SCAN_MAX}\n` +
  `local WAIT_BUCKETS_MS, HOLD_BUCKETS_MS, MAX_OBSERVED_MS = {${WAIT_BUCKETS_MS.join(', ')}}, ` +
  `{${HOLD_BUCKETS_MS.join(', ')}}, ${MAX_OBSERVED_MS}\n`;
const COMMON = body(common);
const TOTALS = body(totals);
const LINE_LIB = LIMITS + COMMON + TOTALS + body(lineLib);

/**
 * The commands common.lua calls (check_keys, clock, raise_counter, write_holder): part of every
 * script's `commands` (define-script.ts), since every script carries them.
 */
export const COMMON_CALLS = ['HEXISTS', 'ZCARD', 'GET', 'TIME', 'SET', 'HSET', 'PEXPIRE', 'DEL'];
/** The commands line-lib.lua and totals.lua call (common.lua's included): part of their scripts' `commands`. */
export const LINE_LIB_CALLS = [
  ...COMMON_CALLS,
  ...'HGET ZREM HDEL ZRANGEBYSCORE ZRANGE ZSCORE EXISTS XADD PUBLISH PTTL HINCRBY'.split(' '),
];

export const ACQUIRE = COMMON + body(acquire);
export const EXTEND = LIMITS + COMMON + TOTALS + body(extend);
export const RETAKE = COMMON + body(retake);
export const RAISE_FENCE = COMMON + body(raiseFence);
export const ENTER = LINE_LIB + body(enter);
export const EXTEND_HOLDER = LINE_LIB + body(extendHolder);
export const LEAVE = LINE_LIB + body(leave);
export const RELEASE = LINE_LIB + body(release);
export const INSPECT = LINE_LIB + body(inspect);
export const FORCE_RELEASE = LINE_LIB + body(forceRelease);
