// Processes the bench starts: timed one-shot commands, and long-lived ones whose
// `--log-format json` events (one JSON object per stderr line) the bench reads.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { epochMs } from './clock.mjs';

export { epochMs };

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const live = new Set();

/** SIGKILL every process the bench started that is still running (error path, Ctrl-C). */
export function killAllProcesses() {
  for (const child of live) child.kill('SIGKILL');
}

/** The caller's environment without DLOCK_* settings and CI, so every command sees the same defaults. */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('DLOCK_') && name !== 'CI') env[name] = value;
  return { ...env, ...extra };
}

/** Run a command to completion; resolves to its wall time (spawn to exit) in ms. Non-zero exit is a bench error. */
export function timed(command, args, { env = cleanEnv(), allowCode = [0] } = {}) {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    let exitedAt = 0;
    let stderr = '';
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    live.add(child);
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) => (live.delete(child), reject(error)));
    child.on('exit', () => (exitedAt = performance.now()));
    child.on('close', (code, signal) => {
      live.delete(child);
      if (!allowCode.includes(code))
        reject(new Error(`${command} ${args.join(' ')} exited ${code ?? signal}: ${stderr.trim()}`));
      else resolve(exitedAt - startedAt);
    });
  });
}

/** A running process with its json events (`{event, ts_ms, ...}`) collected from stderr. */
export class Proc {
  constructor(command, args, { env = cleanEnv(), stdin = 'ignore' } = {}) {
    this.label = `${command} ${args.join(' ')}`;
    this.spawnedAt = epochMs();
    this.events = [];
    this.stderr = '';
    this.listeners = new Set();
    this.child = spawn(command, args, { stdio: [stdin, 'ignore', 'pipe'], env });
    live.add(this.child);
    createInterface({ input: this.child.stderr }).on('line', (line) => {
      this.stderr += `${line}\n`;
      if (line.startsWith('{')) {
        try {
          this.events.push(JSON.parse(line));
        } catch {
          // Not an event: kept in stderr for the error message.
        }
      }
      this.listeners.forEach((listener) => listener());
    });
    this.closed = false;
    this.exited = new Promise((resolve) => {
      const close = (code, signal) => {
        if (this.closed) return;
        live.delete(this.child);
        this.closed = true;
        this.exitedAt ??= epochMs();
        resolve({ code, signal });
        this.listeners.forEach((listener) => listener());
      };
      this.child.on('exit', () => (this.exitedAt = epochMs()));
      this.child.on('error', (error) => ((this.stderr += `${error.message}\n`), close(null, null)));
      this.child.on('close', close);
    });
  }

  get pid() {
    return this.child.pid;
  }

  event(name) {
    return this.events.find((e) => e.event === name);
  }

  /** Resolves with the first `name` event; rejects if the process ends first or after `timeoutMs`. */
  waitFor(name, timeoutMs = 60_000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          finish(
            new Error(`no "${name}" event within ${timeoutMs} ms from ${this.label}; stderr: ${this.stderr.trim()}`),
          ),
        timeoutMs,
      );
      const finish = (error, value) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error) reject(error);
        else resolve(value);
      };
      const check = () => {
        const found = this.event(name);
        if (found) finish(undefined, found);
        else if (this.closed) finish(new Error(`${this.label} exited before "${name}"; stderr: ${this.stderr.trim()}`));
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Wait for exit (at most `timeoutMs`); a code other than `expected` is a bench error. */
  async done(expected = 0, timeoutMs = 120_000) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.label} still running after ${timeoutMs} ms; stderr: ${this.stderr.trim()}`)),
        timeoutMs,
      );
    });
    const { code, signal } = await Promise.race([this.exited, timeout]).finally(() => clearTimeout(timer));
    if (code !== expected)
      throw new Error(`${this.label} exited ${code ?? signal}, expected ${expected}; stderr: ${this.stderr.trim()}`);
    return this;
  }

  /** Let a gated child (`head -n 1` reading dlock's stdin) finish. */
  openGate() {
    this.gateOpenedAt = epochMs();
    this.child.stdin.end('go\n');
  }

  kill(signal = 'SIGTERM') {
    if (!this.closed) this.child.kill(signal);
  }
}
