// The line (docs/reference/waiting-in-line.md) seen from outside: start dlock waiters, wait until each is
// in line (its "waiting" event), and read the line's keys for assertions.

import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { events, onlyEvent, spawnDlock, type LockEventLine } from '../fixtures/observe.js';
import type { Result, Running } from './cli.js';

/** `dlock run --log-format json <flags> <key> -- <command>` against one Redis URL. */
export function runIn(url: string, key: string, flags: string[], command: string[]): Running {
  return spawnDlock(['run', '--redis', url, '--log-format', 'json', ...flags, key, '--', ...command]);
}

/** Resolves once `running` is in line: its "waiting" event (logged after its place was taken). */
export async function inLine(running: Running): Promise<LockEventLine> {
  await running.waitFor('"event":"waiting"');
  return events(running.stderr(), 'waiting')[0];
}

/** The one `event` of a finished run (or of a stderr transcript so far), with its stderr in the failure message. */
export function eventOf(result: Result | string, event: string): LockEventLine {
  return onlyEvent(typeof result === 'string' ? result : result.stderr, event);
}

/** The owner tokens in line for `key`, first first. */
export function lineOf(client: Redis, key: string): Promise<string[]> {
  return client.zrange(`dlock:{${key}}:line`, 0, -1);
}

/** A shell command that appends `<start_ns> <end_ns> <label> <slot> <fence> <token>` to `log` after sleeping `seconds`. */
export function section(log: string, label: string, seconds = 0): string[] {
  const sleep = seconds > 0 ? `sleep ${seconds}; ` : '';
  return [
    'sh',
    '-c',
    `s=$(date +%s%N); ${sleep}e=$(date +%s%N); echo "$s $e ${label} \${DLOCK_SLOT:--} $DLOCK_FENCING_TOKEN $DLOCK_TOKEN" >>${log}`,
  ];
}

export interface Section {
  startMs: number;
  endMs: number;
  label: string;
  slot: number | undefined;
  fence: bigint;
  token: string;
}

/** The sections `section` commands appended to `log`, in the order they were written. */
export function sections(log: string): Section[] {
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([start, end, label, slot, fence, token]) => ({
      startMs: Number(BigInt(start) / 1000n) / 1000,
      endMs: Number(BigInt(end) / 1000n) / 1000,
      label,
      slot: slot === '-' ? undefined : Number(slot),
      fence: BigInt(fence),
      token,
    }));
}

/** Do two sections run at the same time at some moment? */
export function overlap(a: Section, b: Section): boolean {
  return a.startMs < b.endMs && b.startMs < a.endMs;
}
