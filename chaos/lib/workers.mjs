// Workers: Node loops that each run `dlock run --log-format json ... <key> -- client.sh`
// again and again on one key, and keep, per dlock process, its json lock events and when it
// was spawned, stopped, killed and exited.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sleep, timeLimit, track, wallMs } from './procs.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DLOCK = process.env.DLOCK_BIN ?? `${ROOT}bin/dlock`;
const CLIENT = `${ROOT}chaos/client.sh`;

/** Codes after which a worker pauses before trying again (Redis down: do not spin node startups). */
const BACK_OFF = new Set([69, 70]);

/** The caller's environment without DLOCK_* settings and CI; C locale for $EPOCHREALTIME's decimal point. */
function workerEnv() {
  const env = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('DLOCK_') && name !== 'CI') env[name] = value;
  return { ...env, LC_ALL: 'C' };
}

/** One `dlock run` process. */
export class DlockRun {
  constructor(id, worker, args) {
    this.id = id;
    this.worker = worker;
    this.events = [];
    this.errors = [];
    this.spawnedAt = wallMs();
    this.killedAt = undefined;
    this.stops = [];
    this.child = track(spawn(DLOCK, args, { stdio: ['ignore', 'ignore', 'pipe'], env: workerEnv() }));
    const lines = createInterface({ input: this.child.stderr });
    lines.on('error', () => {});
    lines.on('line', (line) => {
      if (line.startsWith('{')) {
        try {
          // received_ms: when the runner read it, an upper bound of when it happened on the
          // runner's clock (dlock's own ts_ms depends on its performance.timeOrigin).
          this.events.push({ ...JSON.parse(line), received_ms: wallMs() + 1 });
          return;
        } catch {
          // Not an event: kept as an error line.
        }
      }
      this.errors.push(line);
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', () => (this.exitedAt = wallMs()));
      this.child.once('error', (error) => (this.errors.push(error.message), (this.exitedAt ??= wallMs()), resolve()));
      this.child.once('close', (code, signal) => {
        this.code = code;
        this.signal = signal;
        resolve();
      });
    });
  }

  get pid() {
    return this.child.pid;
  }

  get done() {
    return this.exitedAt !== undefined;
  }

  get acquired() {
    return this.events.find((e) => e.event === 'acquired');
  }

  /** Exit status as a shell shows it. */
  get status() {
    return this.signal ? `${this.signal}` : String(this.code);
  }

  signalWith(signal) {
    if (this.done) return false;
    try {
      return this.child.kill(signal);
    } catch {
      return false;
    }
  }
}

export class Workers {
  /**
   * @param {object} o
   * @param {number} o.count workers
   * @param {string[]} o.urls --redis URLs
   * @param {string} o.key lock key
   * @param {number} o.ttlMs
   * @param {number} o.resourcePort
   * @param {string[]} [o.extraArgs] more dlock run options (e.g. --sync-replicas 1)
   */
  constructor({ count, urls, key, ttlMs, resourcePort, extraArgs = [] }) {
    Object.assign(this, { count, urls, key, ttlMs, resourcePort, extraArgs });
    this.runs = new Map();
    this.sequence = 0;
    this.stopping = false;
    this.loops = [];
  }

  args(runId) {
    const redis = this.urls.flatMap((url) => ['--redis', url]);
    // connect-timeout = ttl: a Redis hung at the start makes dlock exit 69 within one TTL, not 5 s
    // (a dlock already waiting rides the outage out: no --wait means forever).
    return [
      'run',
      '--log-format',
      'json',
      '--ttl',
      `${this.ttlMs}ms`,
      '--connect-timeout',
      `${this.ttlMs}ms`,
      ...redis,
      ...this.extraArgs,
      this.key,
      '--',
      'bash',
      CLIENT,
      String(this.resourcePort),
      runId,
    ];
  }

  start() {
    for (let worker = 1; worker <= this.count; worker++) this.loops.push(this.loop(worker));
  }

  async loop(worker) {
    while (!this.stopping) {
      const id = `${++this.sequence}`;
      const run = new DlockRun(id, worker, this.args(id));
      this.runs.set(id, run);
      await run.exited;
      if (BACK_OFF.has(run.code) || run.code === undefined) await sleep(this.ttlMs / 4);
      // Through the event loop every time: a run that ends at once (a spawn error) must not make
      // this loop a chain of promises that starves the timers, stop() included.
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Stop starting runs; interrupt the ones still waiting; let holders finish within `graceMs`, then SIGKILL. */
  async stop(graceMs) {
    this.stopping = true;
    for (const run of this.runs.values())
      if (!run.done && !run.acquired && !run.stops.some((s) => s.to === undefined)) run.signalWith('SIGTERM');
    const all = Promise.all(this.loops);
    const timer = timeLimit(graceMs).then(() => 'late');
    if ((await Promise.race([all, timer])) === 'late') {
      for (const run of this.runs.values()) {
        run.signalWith('SIGCONT');
        run.signalWith('SIGKILL');
      }
      await all;
    }
  }
}
