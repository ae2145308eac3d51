// `sleep` processes a test can tell apart from every other: each gets an argument no other process
// has (600 s and a tail unique to the test), found again through /proc/<pid>/cmdline, and the ones
// a test left are killed after it (a failing test must not leave its sleeps behind for the next).

import { readdirSync, readFileSync } from 'node:fs';
import { afterEach } from 'vitest';
import { isAlive } from '../fixtures/observe.js';

let count = 0;
const used: string[] = [];

afterEach(() => {
  for (const pid of used.splice(0).flatMap(sleeps)) process.kill(pid, 'SIGKILL');
});

/** A `sleep` argument no other process has. */
export function sleepArg(): string {
  const arg = `600.${process.pid}${++count}`;
  used.push(arg);
  return arg;
}

/** Live (not zombie) `sleep <arg>` processes. */
export function sleeps(arg: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1') === `sleep\0${arg}\0` && isAlive(pid);
      } catch {
        return false;
      }
    });
}
