// The runner's own event-loop stalls. Every promise about timing assumes dlock gets the CPU
// within its margin (a third of the TTL); when the runner itself was frozen for that long, the
// machine was overloaded, and a violation at that moment says so next to it.

import { wallMs } from './procs.mjs';

const PERIOD_MS = 10;
const NOTABLE_MS = 25;

export class StallMonitor {
  constructor() {
    this.stalls = [];
    let last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      const lagMs = now - last - PERIOD_MS;
      last = now;
      if (lagMs > NOTABLE_MS) this.stalls.push({ from: wallMs() - lagMs, to: wallMs(), lagMs });
    }, PERIOD_MS);
    this.timer.unref();
  }

  /** The longest stall that overlapped [from, to] (0 if none). */
  longestWithin(from, to) {
    return Math.max(0, ...this.stalls.filter((s) => s.to >= from && s.from <= to).map((s) => s.lagMs));
  }

  get longest() {
    return Math.max(0, ...this.stalls.map((s) => s.lagMs));
  }

  stop() {
    clearInterval(this.timer);
  }
}
