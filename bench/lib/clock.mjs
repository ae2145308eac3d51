// Epoch milliseconds with fractions, computed as dlock computes its events' `ts_ms`
// (src/timeout.ts epochMs): the monotonic clock plus the largest wall-clock offset seen so far.
// performance.timeOrigin is read once as a process starts, and a process descheduled at that
// moment keeps an origin that many milliseconds off (up to 164 ms seen with 60 Node processes
// starting at once on 2 cores), which made single handoffs come out 30 ms negative.

let offset = -Infinity;

export function epochMs() {
  const wall = Date.now();
  const mono = performance.now();
  if (wall - mono > offset) offset = wall - mono;
  return offset + mono;
}
epochMs();
