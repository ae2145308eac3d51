// Who holds or waits, read from the keys of one lock: the key with the lowest create revision holds,
// the others wait in that order (etcd's mutex). dlock writes its details into its key's value as
// JSON; etcdctl writes none, and anyone with write access may write anything: every field is cut
// and checked here, and a value that is not dlock's reads as unknown details, never as an error.

import { REASON_MAX, type Holder, type HolderMeta, type Superseder, type Waiter } from '../../backend/holder.js';
import { epochMs } from '../../clock.js';
import { cut, parseCount } from '../../untrusted.js';
import { isObject, type Kv } from './codec.js';

/**
 * The details dlock writes into its key (the value etcdctl leaves empty): who, since when (this host's clock),
 * the lease; `supersede` "1" with --supersede; --reason and the user; a hold's `hold` "1" and its end
 * (`until_ms`, none until `dlock unhold`).
 */
export function holderValue(meta: HolderMeta, ttlMs: number, supersede = false): string {
  const sinceMs = Math.round(epochMs());
  const hold = meta.hold && {
    hold: '1',
    ...(meta.hold.forever ? {} : { until_ms: String(Math.round(meta.hold.untilMs ?? sinceMs + ttlMs)) }),
  };
  return JSON.stringify({
    host: meta.host,
    pid: meta.pid,
    cmd: meta.cmd,
    since_ms: sinceMs,
    // A hold until `dlock unhold` has no lease length to show (its lease is etcd's longest).
    ...(meta.hold?.forever ? {} : { ttl_ms: ttlMs }),
    ...(supersede ? { supersede: '1' } : {}),
    ...(meta.reason ? { reason: meta.reason } : {}),
    ...(meta.user ? { user: meta.user } : {}),
    ...hold,
  });
}

/** What a waiter shows of them: a hold begins only when its turn comes, so its end is not shown yet. */
function waiting({ reason, user, hold }: ReturnType<typeof purpose>): Pick<Waiter, 'reason' | 'user' | 'hold'> {
  return {
    ...(reason === undefined ? {} : { reason }),
    ...(user === undefined ? {} : { user }),
    ...(hold ? { hold } : {}),
  };
}

/** Why and by whom, as the details say (cut); a hold's flag and end. */
function purpose(d: Record<string, unknown>): Pick<Holder, 'reason' | 'user' | 'hold' | 'untilMs'> {
  const reason = typeof d.reason === 'string' && d.reason !== '' ? cut(d.reason, REASON_MAX) : undefined;
  const user = typeof d.user === 'string' && d.user !== '' ? cut(d.user) : undefined;
  const untilMs = ms(d.until_ms);
  return {
    ...(reason === undefined ? {} : { reason }),
    ...(user === undefined ? {} : { user }),
    ...(d.hold === '1' ? { hold: true, ...(untilMs ? { untilMs } : {}) } : {}),
  };
}

/** The register's value (supersede.ts): who joined last with --supersede, and when (this host's clock). */
export function registerValue(by: HolderMeta): string {
  return JSON.stringify({ host: by.host, pid: String(by.pid), cmd: by.cmd, at_ms: String(Math.round(epochMs())) });
}

/** Whether a key's details say it waits with --supersede. */
export function supersedes(kv: Kv): boolean {
  return details(kv).supersede === '1';
}

/** Who the register says joined last (forged: only shown). */
export function registerBy(kv: Kv): Superseder {
  const d = details(kv);
  const atMs = ms(d.at_ms);
  return { host: text(d.host), pid: text(d.pid), cmd: text(d.cmd), ...(atMs ? { atMs } : {}) };
}

/** The details of a hold that release --force closed: its own, and when it was closed. */
export function closedValue(kv: Kv, forcedMs: number): string {
  return JSON.stringify({ ...details(kv), forced_ms: forcedMs });
}

/** A value of at most this many bytes is read for details; a larger one shows none. */
const MAX_VALUE_BYTES = 64 * 1024;

function details(kv: Kv): Record<string, unknown> {
  if (kv.value.length === 0 || kv.value.length > MAX_VALUE_BYTES) return {};
  try {
    const parsed: unknown = JSON.parse(kv.value.toString('utf8'));
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

const text = (value: unknown): string =>
  typeof value === 'string' ? cut(value) : typeof value === 'number' ? String(value) : '';
const ms = (value: unknown): number | undefined =>
  typeof value === 'number'
    ? parseCount(String(value), 0, 8.64e15)
    : typeof value === 'string'
      ? parseCount(value, 0, 8.64e15)
      : undefined;

/** A holder's key as the vocabulary says it: owner = the lease (hex), fence = its create revision. */
export function holderOf(kv: Kv, owner: string): Holder {
  const d = details(kv);
  const sinceMs = ms(d.since_ms);
  const ttlMs = ms(d.ttl_ms);
  const forcedMs = ms(d.forced_ms) ?? 0;
  return {
    kind: 'exclusive',
    owner: forcedMs > 0 ? '' : owner,
    fence: kv.createRevision,
    host: text(d.host),
    pid: text(d.pid),
    cmd: text(d.cmd),
    ...(sinceMs !== undefined && sinceMs > 0 ? { sinceMs } : {}),
    ...(ttlMs !== undefined && ttlMs > 0 ? { ttlMs } : {}),
    forcedMs,
    ...purpose(d),
  };
}

/** A waiter's key: its details, how long it has waited by this host's clock (etcd's replies carry no time). */
export function waiterOf(kv: Kv, nowMs: number = Date.now()): Waiter {
  const d = details(kv);
  const sinceMs = ms(d.since_ms);
  return {
    mode: 'exclusive',
    host: text(d.host),
    pid: text(d.pid),
    cmd: text(d.cmd),
    ...(sinceMs !== undefined && sinceMs > 0 ? { sinceMs, waitedMs: Math.max(0, nowMs - sinceMs) } : {}),
    // etcd's line orders by create revision alone (what etcdctl lock shares): no priority.
    priority: 0,
    supersede: d.supersede === '1',
    ...waiting(purpose(d)),
  };
}
