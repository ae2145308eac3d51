// What is said of a hold (`dlock hold`: a holder with no process) and of a holder's --reason: "frozen by
// ana@ci-7 for 'release 4.2 freeze' until 18:00, 2h left". Stored fields are escaped as they go in.

import { formatDuration } from '../duration.js';
import type { Holder } from '../backend/index.js';
import { printable } from '../untrusted.js';

/** " for '<reason>'", escaped; "" without one. */
export function reasonPart(reason: string | undefined): string {
  return reason === undefined ? '' : ` for '${printable(reason)}'`;
}

/** "ana@ci-7" (the user, when stored, at the host), escaped. */
export function whoOf(holder: Pick<Holder, 'user' | 'host'>): string {
  const host = printable(holder.host) || 'unknown host';
  return holder.user ? `${printable(holder.user)}@${host}` : host;
}

/**
 * A time on this host's clock, for a person: "18:00" within the next day, else "2026-12-24 18:00"; local
 * time, as --until is read.
 */
export function localTime(ms: number, nowMs: number = Date.now()): string {
  const at = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}`;
  if (Math.abs(ms - nowMs) < 86_400_000) return clock;
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${clock}`;
}

/** "until 18:00, 2h left" (left counted to `nowMs`, the store's time), or "until dlock unhold". */
export function untilPart(untilMs: number | undefined, nowMs: number): string {
  if (untilMs === undefined) return 'until dlock unhold';
  return `until ${localTime(untilMs, nowMs)}, ${formatDuration(Math.max(0, untilMs - nowMs))} left`;
}

/** "frozen by ana@ci-7 for 'release 4.2 freeze' until 18:00, 2h left". */
export function holdText(holder: Holder, nowMs: number): string {
  return `frozen by ${whoOf(holder)}${reasonPart(holder.reason)} ${untilPart(holder.untilMs, nowMs)}`;
}
