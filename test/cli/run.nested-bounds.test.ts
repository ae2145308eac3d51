// A nested `dlock run` (on the key its calling dlock holds) enforces its own --max-hold and
// --heartbeat, counted from its command's start: the nested command's whole tree is stopped
// (SIGTERM, SIGKILL after --kill-after), the nested dlock exits 124 and leaves the lock to its
// parent (no release, no history). --heartbeat shares the parent's heartbeat file when it has one,
// else uses its own. Signalled, a nested dlock stops its command's whole tree as the parent does.
// Real redis-server; every time bound from the JSON events' ts_ms.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect, test } from 'vitest';
import type { RedisServer } from '../../support/redis-server.mjs';
import { events, isAlive, onlyEvent, spawnDlock, tempDir, waitForFile } from '../fixtures/observe.js';
import { cleanEnv, DLOCK, dlock, type Result } from '../helpers/cli.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const env = (extra: Record<string, string> = {}) => cleanEnv({ D: DLOCK, XDG_RUNTIME_DIR: tempDir(), ...extra });

/**
 * `dlock run --log-format json <flags> <key> -- sh -c <script>`; in the script `nested` is
 * `dlock run --log-format json` on the same Redis, $K the key and $T a fresh directory.
 */
function outer(flags: string[], key: string, script: string, dir = tempDir()): Promise<Result> {
  const helper = 'nested() { "$D" run --redis "$R" --log-format json "$@"; }';
  const command = ['sh', '-c', `${helper}\n${script}`];
  const args = ['run', '--redis', redis.url, '--log-format', 'json', ...flags, key, '--', ...command];
  return spawnDlock(args, { env: env({ R: redis.url, K: key, T: dir }) }).result;
}

let sleeps = 0;
/** A `sleep` argument no other process has: long enough to outlast a test that fails (today's code runs it out). */
const marker = () => `4.${process.pid}${++sleeps}`;

/** Pids of `sleep <marker>` still running. */
function sleepsLeft(mark: string): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${mark}\0` && isAlive(Number(pid));
      } catch {
        return false;
      }
    });
}

async function released(key: string): Promise<Record<string, unknown>[]> {
  const { stdout } = await dlock(['history', '--redis', redis.url, '--json', key], { env: env() });
  return (JSON.parse(stdout) as Record<string, unknown>[]).filter((entry) => entry.event === 'released');
}

/** The nested run's "acquired" event (reentrant) and the parent's. */
function acquiredEvents(stderr: string) {
  const all = events(stderr, 'acquired');
  expect(all).toHaveLength(2);
  const nested = all.find((e) => e.reentrant === true)!;
  const parent = all.find((e) => e.reentrant !== true)!;
  expect(nested.fence).toBe(parent.fence);
  return { nested, parent };
}

test('nested --max-hold 1s: its tree stopped at 1 s, exit 124; the parent still holds the lock and ends 0', async () => {
  const mark = marker();
  const result = await outer(
    [],
    'nest-maxhold',
    `
    nested --max-hold 1s --kill-after 500ms "$K" -- sh -c 'sleep ${mark} & wait'; echo "nested=$?"
    "$D" status --redis "$R" "$K" >/dev/null; echo "status=$?"
    echo after
    `,
  );
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual(['nested=124', 'status=0', 'after']);
  const { nested, parent } = acquiredEvents(result.stderr);
  const maxHold = onlyEvent(result.stderr, 'max-hold');
  expect(maxHold).toMatchObject({ key: 'nest-maxhold', fence: parent.fence, max_hold_ms: 1000, reentrant: true });
  expect(maxHold.held_ms).toBeGreaterThanOrEqual(1000);
  // Counted from the nested command's start (just after its "acquired"), not from the parent's.
  expect(maxHold.ts_ms - nested.ts_ms).toBeGreaterThanOrEqual(990);
  expect(maxHold.ts_ms - nested.ts_ms).toBeLessThan(1600);
  const signal = onlyEvent(result.stderr, 'signal');
  expect(signal).toMatchObject({ signal: 'SIGTERM', reason: 'max-hold' });
  expect(signal.other_pids).toHaveLength(1);
  expect(sleepsLeft(mark)).toEqual([]);
  // One release, the parent's, when its script ended: the nested run released nothing.
  expect(onlyEvent(result.stderr, 'released')).toMatchObject({ released: true, exit: 0 });
  const history = await released('nest-maxhold');
  expect(history).toHaveLength(1);
  expect(history[0]).toMatchObject({ exit: 0, fence: parent.fence });
  expect(history[0]).not.toHaveProperty('reason');
});

test('nested --heartbeat under a parent without one: its own file, heartbeats keep it alive, silence → 124', async () => {
  const dir = tempDir();
  const mark = marker();
  const beats =
    `printf %s "$DLOCK_HEARTBEAT_FILE" > "$T/file.tmp"; mv "$T/file.tmp" "$T/file"; ` +
    `i=0; while [ $i -lt 6 ]; do sleep 0.2; "$D" heartbeat || exit 9; i=$((i + 1)); done; ` +
    `date +%s%3N > "$T/last.tmp"; mv "$T/last.tmp" "$T/last"; sleep ${mark} & wait`;
  const result = await outer(
    [],
    'nest-ownbeat',
    `
    nested --heartbeat 500ms --kill-after 300ms "$K" -- sh -c '${beats}'; echo "nested=$?"
    echo "parent file: \${DLOCK_HEARTBEAT_FILE-none}"
    "$D" status --redis "$R" "$K" >/dev/null; echo "status=$?"
    `,
    dir,
  );
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual(['nested=124', 'parent file: none', 'status=0']);
  const file = readFileSync(join(dir, 'file'), 'utf8');
  expect(basename(file)).toMatch(/^heartbeat-/);
  // Its own file, removed when it ended.
  expect(existsSync(file)).toBe(false);
  // Six heartbeats 200 ms apart (1.2 s) under --heartbeat 500ms, then none.
  const lastBeat = Number(readFileSync(join(dir, 'last'), 'utf8'));
  const missed = onlyEvent(result.stderr, 'heartbeat-missed');
  expect(missed).toMatchObject({ key: 'nest-ownbeat', heartbeat_ms: 500, reentrant: true });
  expect(missed.ts_ms - acquiredEvents(result.stderr).nested.ts_ms).toBeGreaterThanOrEqual(1200);
  expect(missed.ts_ms - lastBeat).toBeGreaterThanOrEqual(400);
  expect(missed.ts_ms - lastBeat).toBeLessThan(1000);
  expect(onlyEvent(result.stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'heartbeat-missed' });
  expect(sleepsLeft(mark)).toEqual([]);
  expect(await released('nest-ownbeat')).toHaveLength(1);
});

test('nested --heartbeat under a parent --heartbeat: the shared file, heartbeats keep both alive, silence → 124', async () => {
  const dir = tempDir();
  const mark = marker();
  // 12 heartbeats 200 ms apart (2.4 s): longer than either --heartbeat, so each saw them.
  const beats =
    `printf %s "$DLOCK_HEARTBEAT_FILE" > "$T/file.tmp"; mv "$T/file.tmp" "$T/file"; ` +
    `i=0; while [ $i -lt 12 ]; do sleep 0.2; "$D" heartbeat || exit 9; i=$((i + 1)); done; ` +
    `date +%s%3N > "$T/last.tmp"; mv "$T/last.tmp" "$T/last"; sleep ${mark} & wait`;
  const result = await outer(
    ['--heartbeat', '2s'],
    'nest-sharedbeat',
    `
    nested --heartbeat 500ms --kill-after 300ms "$K" -- sh -c '${beats}'; echo "nested=$?"
    "$D" heartbeat; echo "beat=$?"
    [ "$(cat "$T/file")" = "$DLOCK_HEARTBEAT_FILE" ] && [ -f "$DLOCK_HEARTBEAT_FILE" ] && echo "shared, kept"
    `,
    dir,
  );
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual(['nested=124', 'beat=0', 'shared, kept']);
  const lastBeat = Number(readFileSync(join(dir, 'last'), 'utf8'));
  // One bound exceeded, the nested run's: the parent saw the nested command's heartbeats.
  const missed = onlyEvent(result.stderr, 'heartbeat-missed');
  expect(missed).toMatchObject({ key: 'nest-sharedbeat', heartbeat_ms: 500, reentrant: true });
  expect(missed.ts_ms - acquiredEvents(result.stderr).parent.ts_ms).toBeGreaterThanOrEqual(2400);
  expect(missed.ts_ms - lastBeat).toBeGreaterThanOrEqual(400);
  expect(missed.ts_ms - lastBeat).toBeLessThan(1000);
  expect(onlyEvent(result.stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'heartbeat-missed' });
  expect(sleepsLeft(mark)).toEqual([]);
  const history = await released('nest-sharedbeat');
  expect(history).toHaveLength(1);
  expect(history[0]).toMatchObject({ exit: 0 });
});

test('an inherited DLOCK_HEARTBEAT_FILE that is no dlock heartbeat file: a nested --heartbeat exits 64, runs nothing', async () => {
  const dir = tempDir();
  const result = await outer(
    [],
    'nest-badbeat',
    `
    ln -s /etc/passwd "$T/heartbeat-link"
    DLOCK_HEARTBEAT_FILE="$T/heartbeat-link" nested --heartbeat 1s "$K" -- touch "$T/ran"; echo "link=$?"
    DLOCK_HEARTBEAT_FILE=/etc/passwd nested --heartbeat 1s "$K" -- touch "$T/ran"; echo "other=$?"
    `,
    dir,
  );
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual(['link=64', 'other=64']);
  expect(existsSync(join(dir, 'ran'))).toBe(false);
  const errors = events(result.stderr, 'error');
  expect(errors).toHaveLength(2);
  for (const error of errors) {
    expect(error).toMatchObject({ exit_code: 64 });
    expect(error.message).toMatch(/^--heartbeat: DLOCK_HEARTBEAT_FILE is not a dlock heartbeat file /);
  }
  expect(readFileSync('/etc/passwd', 'utf8')).not.toBe('');
});

test('a nested dlock sent SIGTERM stops its whole command, SIGKILL after its --kill-after; the parent keeps the lock', async () => {
  const dir = tempDir();
  const mark = marker();
  // The command ignores SIGTERM, and so do the sleeps it starts; $PPID is the nested dlock.
  // "ready" is written by the shell itself after mv has exited and been reaped, so the group
  // holds exactly the shell and the two sleeps when the test signals.
  const command =
    `trap "" TERM; sleep ${mark} & sleep ${mark} & ` +
    `echo $PPID > "$T/dlock.tmp"; mv "$T/dlock.tmp" "$T/dlock"; : > "$T/ready"; wait`;
  const parent = outer(
    [],
    'nest-signal',
    `
    nested --kill-after 500ms "$K" -- sh -c '${command}'; echo "nested=$?"
    "$D" status --redis "$R" "$K" >/dev/null; echo "status=$?"
    `,
    dir,
  );
  await waitForFile(join(dir, 'ready'));
  const nestedPid = Number(readFileSync(join(dir, 'dlock'), 'utf8').trim());
  process.kill(nestedPid, 'SIGTERM');
  const result = await parent;
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toEqual(['nested=137', 'status=0']);
  const [term, kill, ...more] = events(result.stderr, 'signal');
  expect(more).toEqual([]);
  expect(term).toMatchObject({ signal: 'SIGTERM', reason: 'forwarded' });
  expect(term.other_pids).toHaveLength(2);
  expect(kill).toMatchObject({ signal: 'SIGKILL', reason: 'kill-after', pid: term.pid });
  expect(kill.ts_ms - term.ts_ms).toBeGreaterThanOrEqual(490);
  expect(kill.ts_ms - term.ts_ms).toBeLessThan(1000);
  expect(sleepsLeft(mark)).toEqual([]);
  expect(await released('nest-signal')).toHaveLength(1);
});
