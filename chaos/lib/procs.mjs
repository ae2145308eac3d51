// Every process the chaos run starts is registered here, so that it can be cleaned up on
// any exit path: normal end, a thrown error, Ctrl-C. A stopped (SIGSTOP) process is
// continued before it is killed. Temporary directories are removed the same way.

import { rmSync } from 'node:fs';
import { killAllServers } from '../../support/redis-server.mjs';

const live = new Set();
const dirs = new Set();

/** Wall-clock ms: the clock the child's $EPOCHREALTIME reads too. */
export const wallMs = () => Date.now();

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** A sleep for Promise.race: it does not keep the runner alive once the race is decided. */
export const timeLimit = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());

/** Register a spawned ChildProcess; it is forgotten when it exits. */
export function track(child) {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

export function trackDir(dir) {
  dirs.add(dir);
  return dir;
}

export function untrackDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

/** SIGKILL everything still running, redis-servers included (children of a killed dlock die with it: parent-death signal). */
export function killAll() {
  for (const child of live) {
    try {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }
  live.clear();
  killAllServers();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

export function liveCount() {
  return live.size;
}

/** Clean up on exit and on SIGINT/SIGTERM/SIGHUP (exit 128+N after cleaning up). */
export function installCleanup() {
  process.on('exit', killAll);
  for (const [signal, number] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
    ['SIGHUP', 1],
  ]) {
    process.on(signal, () => {
      console.error(`chaos: ${signal}: stopping every process it started`);
      killAll();
      process.exit(128 + number);
    });
  }
}
