// The Redis server's clock as a read saw it: what every age dlock shows counts to, so that a
// reader's wrong wall clock (or a holder's: the scripts stamp times with TIME) never shows.

import { now } from '../clock.js';

export interface ServerClock {
  /** The server's time (TIME) in the read's reply, ms. */
  serverMs: number;
  /** This host's monotonic ms (clock.ts `now()`) when the reply came. */
  readAt: number;
}

/** The server's clock read now: the server's ms at the read plus the monotonic time since. */
export function clockAt(serverMs: number): ServerClock {
  return { serverMs, readAt: now() };
}

/**
 * The server's time at monotonic `at` (default: now), from a read's clock; without one (no
 * instance answered), this host's wall clock: the best there is.
 */
export function serverNow(clock: ServerClock | undefined, at: number = now()): number {
  return clock ? clock.serverMs + (at - clock.readAt) : Date.now();
}
