// What status shows of a holder, a waiter and an instance's view (JSON).

import {
  type Capabilities,
  type Holder,
  isClosed,
  type MemberView,
  MODES,
  pidNumber,
  type Waiter,
} from '../backend/index.js';
import { processFields } from './dead-pid.js';

/**
 * What status shows of a holder: everything but the owner token (a capability to release).
 * Always the same shape: a pid, time or length the hash does not hold as a number is null.
 * The text fields are as stored (cut): serialise with toJson, which escapes what JSON.stringify leaves raw.
 */
export function publicHolder(holder: Holder, ttlMs: number | undefined) {
  const since = holder.sinceMs === undefined ? null : holder.sinceMs;
  return {
    ...MODES[holder.kind].holderFields(holder.slot),
    host: holder.host,
    pid: pidNumber(holder) ?? null,
    ...processFields(holder),
    cmd: holder.cmd,
    since: since === null ? null : new Date(since).toISOString(),
    since_ms: since,
    ttl_ms: holder.ttlMs ?? null,
    // Negative: the hash has no expiry (a hold until unhold; a hash dlock did not write).
    ttl_left_ms: ttlMs === undefined || ttlMs < 0 ? null : ttlMs,
    fence: holder.fence,
    ...(holder.reason === undefined ? {} : { reason: holder.reason }),
    ...(holder.user === undefined ? {} : { user: holder.user }),
    ...(holder.hold ? { hold: true as const, until_ms: holder.untilMs ?? null } : {}),
    ...(holder.maxHoldMs === undefined ? {} : { max_hold_ms: holder.maxHoldMs }),
    ...(holder.beatMs === undefined ? {} : { last_heartbeat_ms: holder.beatMs }),
    ...(isClosed(holder) ? { closed: true } : {}),
  };
}

/** A waiter in line as status shows it (JSON). */
export function publicWaiter(waiter: Waiter, place: number) {
  return {
    place,
    mode: waiter.mode,
    host: waiter.host,
    pid: pidNumber(waiter) ?? null,
    cmd: waiter.cmd,
    waited_ms: waiter.waitedMs ?? null,
    priority: waiter.priority,
    supersede: waiter.supersede,
    ...(waiter.reason === undefined ? {} : { reason: waiter.reason }),
    ...(waiter.user === undefined ? {} : { user: waiter.user }),
    ...(waiter.hold ? { hold: true as const } : {}),
  };
}

/**
 * A member's view (JSON), by keyJson's rule: a hold closed by release --force is held by nobody, and closed.
 * The member is named under the store's own word (the Redis backend's: `redis`).
 */
export function publicView(v: MemberView, caps: Pick<Capabilities, 'members'>) {
  const closed = v.holder !== undefined && isClosed(v.holder);
  return {
    [caps.members.field]: v.label,
    held: v.held && !closed,
    ...(closed ? { closed: true } : {}),
    ...(v.holder ? { holder: publicHolder(v.holder, v.ttlLeftMs) } : {}),
    ...(v.failure ? { error: v.failure.reason } : {}),
  };
}
