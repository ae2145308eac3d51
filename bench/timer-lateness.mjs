// How late does a Node timer fire on a loaded machine? Starts `--busy N` spinning processes
// (default 4, on a 2-core machine: twice as many runnable processes as cores), then records the
// lateness of `--samples` setTimeout calls of random 5-50 ms and prints percentiles. This is what
// sizes the scheduling margin of dlock's deadline (src/timing.ts, README "Guarantees").
//   node bench/timer-lateness.mjs [--busy 4] [--seconds 10]

import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const busy = arg('busy', 4);
const seconds = arg('seconds', 10);
const spinners = Array.from({ length: busy }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
);
const stop = () => spinners.forEach((s) => s.kill('SIGKILL'));
process.on('exit', stop);

const now = () => Number(process.hrtime.bigint()) / 1e6;
const lateness = [];
await new Promise((r) => setTimeout(r, 500)); // let the spinners start
const end = now() + seconds * 1000;
while (now() < end) {
  const delay = 5 + Math.random() * 45;
  const due = now() + delay;
  await new Promise((r) => setTimeout(r, delay));
  lateness.push(now() - due);
}
stop();
lateness.sort((a, b) => a - b);
const p = (q) => lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))].toFixed(1);
console.log(
  `${busy} busy processes on ${cpus().length} cores (load ${loadavg()[0].toFixed(1)}), ${lateness.length} timers: ` +
    `lateness p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, p99.9 ${p(0.999)} ms, max ${lateness.at(-1).toFixed(1)} ms`,
);
