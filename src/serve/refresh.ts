// One read of the store per refresh interval, however many viewers ask: the board's answers come
// from the last read while it is fresh, and the viewers that ask while a read is under way wait
// for that one. A read that fails keeps the last good one (marked stale) and says since when.

import { epochMs, now } from '../clock.js';

/** What a viewer gets: the last good value (if any), and the failure since when reads have failed. */
export interface Reading<T> {
  value?: T;
  /** Wall-clock ms when the last good value was read. */
  readAtMs?: number;
  /** Set while the reads fail: the first failure's wall-clock ms and the last failure. */
  failing?: { sinceMs: number; error: unknown };
}

export class Refreshing<T> {
  private last: Reading<T> = {};
  /** Monotonic ms of the last read's start (success or failure). */
  private lastReadAt = -Infinity;
  private inFlight: Promise<Reading<T>> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly intervalMs: number,
    /** Told when reads start to fail, and when one succeeds again. */
    private readonly watch?: { failing(error: unknown): void; recovered(): void },
  ) {}

  /** The last reading when it is younger than the interval, else a new one (shared with whoever asks meanwhile). */
  get(): Promise<Reading<T>> {
    if (now() - this.lastReadAt < this.intervalMs) return Promise.resolve(this.last);
    this.inFlight ??= this.refresh().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async refresh(): Promise<Reading<T>> {
    try {
      const value = await this.read();
      if (this.last.failing) this.watch?.recovered();
      this.last = { value, readAtMs: epochMs() };
    } catch (error) {
      if (!this.last.failing) this.watch?.failing(error);
      this.last = { ...this.last, failing: { sinceMs: this.last.failing?.sinceMs ?? epochMs(), error } };
    }
    // A read that took longer than the interval still serves its viewers for one interval.
    this.lastReadAt = now();
    return this.last;
  }
}
