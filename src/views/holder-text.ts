// One line about who holds a lock, for the spinner, the busy message and release --force.
// The holder's fields are untrusted: each is escaped here, as it goes into the line.

import { formatDuration } from '../duration.js';
import { now } from '../clock.js';
import { type Holder, isClosed, MODES, storeNow, slotsOf } from '../backend/index.js';
import type { HolderSnapshot } from './snapshot.js';
import { printable } from '../untrusted.js';
import { isNoKeeper, processText } from './dead-pid.js';
import { holdText, reasonPart } from './hold-text.js';

/**
 * Who holds a lock, for how long, its fence and when it expires, on one line. `nowMs`: the
 * server's time (its `since_ms` is on the server's clock); this host's clock when not known.
 */
export function describeHolder(holder: Holder, pttlMs?: number, nowMs: number = Date.now()): string {
  // A hold (no process): who, why and until when; its fence.
  if (holder.hold && !holder.forcedMs)
    return `${holdText(holder, nowMs)}${holder.fence ? `, fence ${printable(holder.fence)}` : ''}`;
  const how = MODES[holder.kind].holderSuffix(holder.slot);
  // A --no-keeper hold stores no pid (processText says why): none is named.
  const pid = printable(holder.pid) || (isNoKeeper(holder) ? '' : '?');
  const who = `${printable(holder.host) || 'unknown host'}${pid && ` pid ${pid}`}${how}`;
  const why = reasonPart(holder.reason);
  const parts = [holder.forcedMs ? `closed by release --force (was held by ${who}${why})` : `held by ${who}${why}`];
  if (holder.sinceMs !== undefined) parts.push(`for ${formatDuration(nowMs - holder.sinceMs)}`);
  if (holder.fence) parts.push(`fence ${printable(holder.fence)}`);
  // Dead, or --no-keeper: the note says when it expires.
  const note = processText(holder, pttlMs);
  if (pttlMs !== undefined && pttlMs >= 0 && !note) parts.push(`expires in ${formatDuration(pttlMs)}`);
  return note ? `${parts.join(', ')}; ${note}` : parts.join(', ');
}

/** A snapshot as one line, aged to `at` (monotonic ms, clock.ts `now()`) on the server's clock. */
export function describeSnapshot(snapshot: HolderSnapshot, at: number = now()): string {
  const nowMs = storeNow(snapshot.clock, at);
  const pttl =
    snapshot.ttlLeftMs === undefined || snapshot.ttlLeftMs < 0
      ? snapshot.ttlLeftMs
      : Math.max(0, snapshot.ttlLeftMs - (at - snapshot.clock.readAt));
  const waiting = snapshot.waiting ? `; ${snapshot.waiting} waiting` : '';
  const { others } = snapshot;
  if (!others) return `${describeHolder(snapshot.holder, pttl, nowMs)}${waiting}`;
  const what = MODES[others.mode.kind].taken(slotsOf(others.mode), others.count);
  const left = pttl === undefined ? 'unknown' : formatDuration(pttl);
  // Closed by release --force: no holder of any kind enters until that lease ends (snapshotOf shows it).
  const when = isClosed(snapshot.holder) ? `closed to new holders for ${left} more` : `the next lease ends in ${left}`;
  return `${what}, ${when} ` + `(${describeHolder(snapshot.holder, undefined, nowMs)})${waiting}`;
}
