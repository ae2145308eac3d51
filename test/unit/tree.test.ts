// A command's processes (src/child/tree.ts): what is below its first process in /proc's pid →
// ppid links, and /proc/<pid>/stat read as it is written (a command name may hold ") " and spaces).

import { expect, test } from 'vitest';
import { carriesLock, descendants, hasEntry, readEntry, type ProcessEntry } from '../../src/child/tree.js';

const entry = (pid: number, ppid: number, pgid = 1): ProcessEntry => ({
  pid,
  ppid,
  pgid,
  session: 1,
  start: '1',
  zombie: false,
});
const table = (...entries: ProcessEntry[]) => new Map(entries.map((e) => [e.pid, e]));

test('children, grandchildren and deeper, breadth first; nothing above or beside', () => {
  const processes = table(entry(1, 0), entry(10, 1), entry(11, 10), entry(12, 10), entry(13, 11), entry(20, 1));
  expect(descendants([10], processes).map((e) => e.pid)).toEqual([11, 12, 13]);
  expect(descendants([20], processes)).toEqual([]);
  expect(descendants([99], processes)).toEqual([]);
});

test('several roots (processes seen before and reparented since) share one walk; none twice', () => {
  const processes = table(entry(10, 1), entry(11, 10), entry(30, 1), entry(31, 30));
  expect(descendants([10, 30, 11], processes).map((e) => e.pid)).toEqual([31]);
  expect(descendants([10, 30], processes).map((e) => e.pid)).toEqual([11, 31]);
});

test('a pid → ppid loop (a table read while pids were reused) ends', () => {
  expect(descendants([5], table(entry(5, 6), entry(6, 5))).map((e) => e.pid)).toEqual([6]);
});

test('this process as /proc tells it: its parent, group and start time', () => {
  const self = readEntry(process.pid);
  expect(self).toMatchObject({ pid: process.pid, ppid: process.ppid, zombie: false });
  expect(self!.start).toMatch(/^\d+$/);
  expect(readEntry(2 ** 30)).toBeUndefined();
});

/** /proc/<pid>/environ's form: NUL-terminated entries. */
const environ = (...entries: string[]) => Buffer.from(entries.map((entry) => `${entry}\0`).join(''));

test('an environment holds the mark only as a whole entry: not inside another name, nor as a prefix of a value', () => {
  expect(hasEntry(environ('DLOCK_TOKEN=t1', 'A=b'), 'DLOCK_TOKEN=t1')).toBe(true);
  expect(hasEntry(environ('A=b', 'DLOCK_TOKEN=t1'), 'DLOCK_TOKEN=t1')).toBe(true);
  expect(hasEntry(environ('XDLOCK_TOKEN=t1', 'DLOCK_TOKEN=t12'), 'DLOCK_TOKEN=t1')).toBe(false);
  expect(hasEntry(environ('XDLOCK_TOKEN=t1', 'DLOCK_TOKEN=t1'), 'DLOCK_TOKEN=t1')).toBe(true);
  expect(hasEntry(Buffer.alloc(0), 'DLOCK_TOKEN=t1')).toBe(false);
});

test('carriesLock: the token as DLOCK_TOKEN, or as an enclosing lock in DLOCK_HELD, never elsewhere', () => {
  const t = 'ab'.repeat(16);
  const mark = `DLOCK_TOKEN=${t}`;
  expect(carriesLock(environ(`DLOCK_TOKEN=${t}`), mark)).toBe(true);
  expect(carriesLock(environ('DLOCK_TOKEN=other', `DLOCK_HELD=a=${t},3,30000,`), mark)).toBe(true);
  expect(carriesLock(environ(`DLOCK_HELD=x=${'cd'.repeat(16)},1,1, k=v=${t},2,3000,1`), mark)).toBe(true);
  expect(carriesLock(environ(`XDLOCK_HELD=a=${t},3,30000,`), mark)).toBe(false);
  expect(carriesLock(environ(`DLOCK_HELD=a=${t}0,3,30000,`), mark)).toBe(false);
  expect(carriesLock(environ(`OTHER=a=${t},3`, 'DLOCK_HELD='), mark)).toBe(false);
  expect(carriesLock(Buffer.alloc(0), mark)).toBe(false);
});
