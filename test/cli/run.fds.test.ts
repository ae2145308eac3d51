// Descriptors the caller opened (3 and up) reach the command at the same numbers, as with
// flock(1) (docs/reference/commands.md): `3>out`, make's jobserver pipe. dlock is started from
// /bin/sh, so the descriptors are set up exactly as a user's shell or make sets them up.
// Both builds: bin/dlock lists them in its sh prologue, the standalone executable in
// scripts/binary-main.cjs (`npm run test:binary` runs this file against it).

import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { childStdio, inheritedFds } from '../../src/child/inherited-fds.js';
import { cleanEnv, DLOCK, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** Run `script` with /bin/sh; "$DL" is dlock, "$URL" the test's Redis. */
function sh(script: string, cwd: string): Promise<Result> {
  const env = cleanEnv({ DL: DLOCK, URL: redis.url });
  for (const name of ['MAKEFLAGS', 'MFLAGS', 'MAKELEVEL', 'MAKEFILES']) delete env[name];
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', script], { cwd, env, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, signal: (error?.signal as NodeJS.Signals | undefined) ?? null, stdout, stderr });
    });
  });
}

/** The child's open descriptors 0-30, listed without opening any itself. */
const LIST_FDS = 'for n in $(seq 0 30); do [ -e /proc/self/fd/$n ] && printf "%s " $n; done; true';

describe('descriptors of the caller reach the command', () => {
  test('3>out: the command writes to descriptor 3', async () => {
    const cwd = tempDir();
    const result = await sh(`"$DL" run --redis "$URL" fd3 -- sh -c 'echo x >&3' 3>out`, cwd);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(join(cwd, 'out'), 'utf8')).toBe('x\n');
  });

  test('exactly the caller’s descriptors: one it did not open stays closed, none of Node’s leak', async () => {
    const cwd = tempDir();
    // 4 and 6-9 are closed in the caller; Node opens its own epoll, eventfd and pipes there.
    const result = await sh(
      `"$DL" run --redis "$URL" gaps -- sh -c '${LIST_FDS}; echo five >&5' 3>three 5>&1 4>&- 6>&- 7>&- 8>&- 9>&- 10<&0 10<&-`,
      cwd,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('0 1 2 3 5 five\n');
  });

  test('in the reentrant path too (dlock run on the key the calling dlock holds)', async () => {
    const cwd = tempDir();
    const inner = `"$DL" run -v --redis "$URL" nested -- sh -c "echo inner >&3"`;
    const result = await sh(`"$DL" run --redis "$URL" nested -- sh -c '${inner}' 3>out`, cwd);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/already held by the calling dlock/);
    expect(readFileSync(join(cwd, 'out'), 'utf8')).toBe('inner\n');
  });

  test('0-2 are not kept closed: a closed stdout or stdin reaches the command as /dev/null (unlike flock)', async () => {
    const cwd = tempDir();
    // The words are expanded before >&2 applies: the readlinks see the shell's own 0 and 1.
    const show = `sh -c 'echo "$(readlink /proc/$$/fd/0) $(readlink /proc/$$/fd/1)" >&2'`;
    const result = await sh(`"$DL" run --redis "$URL" fd012 -- ${show} <&- >&-`, cwd);
    expect(result).toMatchObject({ code: 0, stderr: '/dev/null /dev/null\n' });
  });

  test('the variable that lists them does not reach the command', async () => {
    const result = await sh(`"$DL" run --redis "$URL" fd-env -- env 3>/dev/null`, tempDir());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(/DLOCK_INHERITED_FDS/);
  });

  test('make -j4 with `+dlock run k -- $(MAKE) -C sub`: the sub-make keeps the jobserver', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'sub'));
    writeFileSync(
      join(cwd, 'Makefile'),
      'all:\n\t+"$(DL)" run --redis "$(URL)" make-lock -- $(MAKE) --no-print-directory -C sub\n',
    );
    // Each job writes when it started and ended; overlapping intervals mean they ran in parallel.
    writeFileSync(
      join(cwd, 'sub', 'Makefile'),
      'all: a b\na b:\n\t@echo "$(MAKEFLAGS)" > $@.flags; date +%s%N > $@.start; sleep 0.5; date +%s%N > $@.end\n',
    );
    const result = await sh('make -j4 --no-print-directory', cwd);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/jobserver unavailable/);
    expect(readFileSync(join(cwd, 'sub', 'a.flags'), 'utf8')).toMatch(/--jobserver-auth=\d+,\d+/);
    const [aStart, aEnd, bStart, bEnd] = ['a.start', 'a.end', 'b.start', 'b.end'].map((name) =>
      BigInt(readFileSync(join(cwd, 'sub', name), 'utf8').trim()),
    );
    expect(aStart < bEnd && bStart < aEnd, 'a and b overlap in time').toBe(true);
  });
});

describe('the list bin/dlock hands over', () => {
  test.each([
    ['4242: 3 5 10', [3, 5, 10]],
    ['4242:', []],
    ['4242: 10 3', [3, 10]],
    ['4242: 1 2 3', [3]],
    ['17: 3 5', []], // made for another process: a stale value in the environment
    ['3 5', []],
    ['4242: 3;rm', []],
    [undefined, []],
  ] as const)('%j -> %j', (value, fds) => {
    expect(inheritedFds(value === undefined ? {} : { DLOCK_INHERITED_FDS: value }, 4242)).toEqual(fds);
  });

  test('each at its own number, gaps ignored (left closed)', () => {
    expect(childStdio([])).toEqual(['inherit', 'inherit', 'inherit']);
    expect(childStdio([3, 5])).toEqual(['inherit', 'inherit', 'inherit', 3, 'ignore', 5]);
  });
});
