// The store's clock as a read saw it: what every age dlock shows counts to, so that a reader's
// wrong wall clock (or a holder's: the Redis scripts stamp times with TIME) never shows. A store
// whose replies carry no time (etcd: its holders stamp their own clocks) gives no StoreClock, and
// the ages count on this host's wall clock (storeNow), never on a clock made up to fill the field.

import { now } from '../clock.js';

export interface StoreClock {
  /** The server's time in the read's reply, ms (the Redis backend: TIME). */
  serverMs: number;
  /** This host's monotonic ms (clock.ts `now()`) when the reply came. */
  readAt: number;
}

/** The server's clock read now: the server's ms at the read plus the monotonic time since. */
export function clockAt(serverMs: number): StoreClock {
  return { serverMs, readAt: now() };
}

/**
 * The server's time at monotonic `at` (default: now), from a read's clock; without one (no
 * instance answered), this host's wall clock: the best there is.
 */
export function storeNow(clock: StoreClock | undefined, at: number = now()): number {
  return clock ? clock.serverMs + (at - clock.readAt) : Date.now();
}
