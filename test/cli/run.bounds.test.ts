// --max-hold and --heartbeat on `dlock run` (docs/reference/options.md): a job held too long, or
// silent too long, is stopped like a lost lock (SIGTERM, SIGKILL after --kill-after), the lock
// released, exit 124, the history saying why; `dlock heartbeat` outside a dlock is a usage error.

import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { events, isAlive, onlyEvent, spawnDlock, tempDir, waitForFile } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const env = (extra: Record<string, string> = {}) => cleanEnv({ D: DLOCK, XDG_RUNTIME_DIR: tempDir(), ...extra });
const run = (flags: string[], key: string, command: string[]) =>
  spawnDlock(['run', '--redis', redis.url, '--log-format', 'json', ...flags, key, '--', ...command], { env: env() });

async function history(key: string): Promise<Record<string, unknown>[]> {
  const { stdout } = await dlock(['history', '--redis', redis.url, '--json', key], { env: env() });
  return JSON.parse(stdout) as Record<string, unknown>[];
}

test('sleep 600 under --max-hold 2s: stopped at 2 s, the lock free at once for the next waiter, exit 124, history', async () => {
  const holder = run(['--max-hold', '2s', '--kill-after', '1s'], 'maxhold', ['sleep', '600']);
  await holder.waitFor('"acquired"');
  const waiter = run(['--wait', '30s'], 'maxhold', ['true']);
  await waiter.waitFor('"waiting"');
  const done = await holder.result;
  expect(done.code, done.stderr).toBe(124);
  const acquired = onlyEvent(done.stderr, 'acquired');
  const maxHold = onlyEvent(done.stderr, 'max-hold');
  expect(maxHold).toMatchObject({ key: 'maxhold', fence: acquired.fence, max_hold_ms: 2000 });
  expect(maxHold.held_ms).toBeGreaterThanOrEqual(2000);
  // Counted from the start of the round that took the lock: a round trip before the "acquired" event.
  expect(maxHold.ts_ms - acquired.ts_ms).toBeGreaterThanOrEqual(1900);
  expect(maxHold.ts_ms - acquired.ts_ms).toBeLessThan(2600);
  const signal = onlyEvent(done.stderr, 'signal');
  expect(signal).toMatchObject({ signal: 'SIGTERM', reason: 'max-hold' });
  expect(isAlive(signal.pid as number)).toBe(false);
  const released = onlyEvent(done.stderr, 'released');
  expect(released.ts_ms - maxHold.ts_ms).toBeLessThan(500);
  // Issue 31: which is which: dlock's outcome (124, and why) and the command's own status (SIGTERM: 143).
  expect(released).toMatchObject({ exit: 124, stopped_by: 'max-hold', command_exit: 143 });

  const next = await waiter.result;
  expect(next.code, next.stderr).toBe(0);
  expect(onlyEvent(next.stderr, 'acquired').ts_ms - released.ts_ms).toBeLessThan(500);
  const [, ended] = await history('maxhold').then((entries) => entries.filter((e) => e.event === 'released'));
  expect(ended).toMatchObject({ event: 'released', exit: 124, reason: 'max-hold', fence: acquired.fence });
  expect(ended).toMatchObject({ command_exit: 143 });
  const table = await dlock(['history', '--redis', redis.url, 'maxhold'], { env: env() });
  expect(table.stdout).toContain(`exit 124 (stopped by --max-hold; the command ended 143), held 2`);
});

test('heartbeats every 200 ms under --heartbeat 1s: the command runs to its end (2 s), exit 0', async () => {
  const loop = 'i=0; while [ $i -lt 10 ]; do sleep 0.2; "$D" heartbeat || exit 9; i=$((i + 1)); done';
  const done = await run(['--heartbeat', '1s'], 'beating', ['sh', '-c', loop]).result;
  expect(done.code, done.stderr).toBe(0);
  expect(done.stderr).not.toContain('heartbeat-missed');
  const [ended] = (await history('beating')).filter((e) => e.event === 'released');
  expect(ended).toMatchObject({ exit: 0 });
  expect(ended).not.toHaveProperty('reason');
  expect(ended).not.toHaveProperty('command_exit');
});

test('stops heartbeating: stopped about 1 s after its last heartbeat, exit 124, history heartbeat-missed', async () => {
  const dir = tempDir();
  const script =
    `"$D" heartbeat && sleep 0.3 && "$D" heartbeat || exit 9; ` +
    `date +%s%3N > ${dir}/last.tmp; mv ${dir}/last.tmp ${dir}/last; exec sleep 600`;
  const done = await run(['--heartbeat', '1s', '--kill-after', '1s'], 'silent', ['sh', '-c', script]).result;
  expect(done.code, done.stderr).toBe(124);
  const lastBeat = Number(readFileSync(join(dir, 'last'), 'utf8'));
  const missed = onlyEvent(done.stderr, 'heartbeat-missed');
  expect(missed).toMatchObject({ key: 'silent', heartbeat_ms: 1000 });
  expect(missed.since_ms).toBeGreaterThanOrEqual(1000);
  // The heartbeat came just before `date` ran; the file is looked at every 100 ms.
  expect(missed.ts_ms - lastBeat).toBeGreaterThanOrEqual(900);
  expect(missed.ts_ms - lastBeat).toBeLessThan(1600);
  expect(onlyEvent(done.stderr, 'signal')).toMatchObject({ signal: 'SIGTERM', reason: 'heartbeat-missed' });
  const [ended] = (await history('silent')).filter((e) => e.event === 'released');
  expect(ended).toMatchObject({ exit: 124, reason: 'heartbeat-missed', command_exit: 143 });
  expect(onlyEvent(done.stderr, 'released')).toMatchObject({ stopped_by: 'heartbeat-missed', command_exit: 143 });
});

test('never heartbeats: --heartbeat counts from the start of the command', async () => {
  const done = await run(['--heartbeat', '500ms', '--kill-after', '1s'], 'mute', ['sleep', '600']).result;
  expect(done.code, done.stderr).toBe(124);
  const missed = onlyEvent(done.stderr, 'heartbeat-missed');
  expect(missed.ts_ms - onlyEvent(done.stderr, 'acquired').ts_ms).toBeLessThan(1200);
});

test('the command is told its heartbeat interval (DLOCK_HEARTBEAT_MS); a nested run with its own: the shorter', async () => {
  const inner = (flags: string, name: string) =>
    `"$D" run --redis "$R" ${flags} hb-ms -- sh -c 'echo "${name}=\${DLOCK_HEARTBEAT_MS-unset}"'`;
  const script =
    `echo "outer=$DLOCK_HEARTBEAT_MS"; ${inner('--heartbeat 700ms', 'own')}; ${inner('', 'inherited')}; ` +
    inner('--heartbeat 5s', 'shorter');
  const told = await spawnDlock(
    ['run', '--redis', redis.url, '--heartbeat', '1500ms', 'hb-ms', '--', 'sh', '-c', script],
    {
      env: env({ R: redis.url }),
    },
  ).result;
  expect(told.code, told.stderr).toBe(0);
  expect(told.stdout.trim().split('\n')).toEqual(['outer=1500', 'own=700', 'inherited=1500', 'shorter=1500']);
  const plain = await spawnDlock(
    ['run', '--redis', redis.url, 'hb-ms', '--', 'sh', '-c', 'echo "${DLOCK_HEARTBEAT_MS-unset}"'],
    {
      env: env(),
    },
  ).result;
  expect(plain.stdout).toBe('unset\n');
});

describe('--signal: the stop signal for a bound or a lost lock (timeout -s), SIGKILL after --kill-after still', () => {
  // The command records the signal it got, stops its sleep, and exits 7 (dlock exits 124 or 76 whatever it says).
  const trapping = (signal: string, file: string) =>
    `trap 'kill $! 2>/dev/null; echo ${signal} > "${file}"; exit 7' ${signal}; sleep 600 & wait`;

  test('--signal INT --max-hold 1s: the command gets SIGINT, exit 124', async () => {
    const dir = tempDir();
    const done = await run(['--signal', 'INT', '--max-hold', '1s', '--kill-after', '900ms'], 'sig-int', [
      'sh',
      '-c',
      trapping('INT', join(dir, 'got')),
    ]).result;
    expect(done.code, done.stderr).toBe(124);
    expect(onlyEvent(done.stderr, 'signal')).toMatchObject({ signal: 'SIGINT', reason: 'max-hold' });
    expect(readFileSync(join(dir, 'got'), 'utf8')).toBe('INT\n');
  });

  test('--signal 1 (a number) on a lost lock: SIGHUP, exit 76; --signal SIGUSR1 with --heartbeat', async () => {
    const dir = tempDir();
    const holder = run(['--signal', '1', '--ttl', '3s', '--kill-after', '1s'], 'sig-hup', [
      'sh',
      '-c',
      trapping('HUP', join(dir, 'got')),
    ]);
    await holder.waitFor('"acquired"');
    await redis.client().del('dlock:{sig-hup}');
    const done = await holder.result;
    expect(done.code, done.stderr).toBe(76);
    expect(onlyEvent(done.stderr, 'signal')).toMatchObject({ signal: 'SIGHUP', reason: 'lost' });
    expect(readFileSync(join(dir, 'got'), 'utf8')).toBe('HUP\n');

    const beat = await run(['--signal', 'SIGUSR1', '--heartbeat', '300ms', '--kill-after', '3s'], 'sig-usr1', [
      'sh',
      '-c',
      trapping('USR1', join(dir, 'usr1')),
    ]).result;
    expect(beat.code, beat.stderr).toBe(124);
    expect(onlyEvent(beat.stderr, 'signal')).toMatchObject({ signal: 'SIGUSR1', reason: 'heartbeat-missed' });
    expect(readFileSync(join(dir, 'usr1'), 'utf8')).toBe('USR1\n');
  });

  test('a command that ignores the signal is still killed after --kill-after', async () => {
    const done = await run(['--signal', 'INT', '--max-hold', '500ms', '--kill-after', '300ms'], 'sig-kill', [
      'sh',
      '-c',
      "trap '' INT; sleep 600 & wait",
    ]).result;
    expect(done.code, done.stderr).toBe(124);
    const sent = events(done.stderr, 'signal').map(({ signal, reason }) => [signal, reason]);
    expect(sent).toEqual([
      ['SIGINT', 'max-hold'],
      ['SIGKILL', 'kill-after'],
    ]);
  });

  test.each([['FOO'], ['0'], ['65'], ['SIG'], ['-15'], [''], [' TERM'], ['TERM '], ['34']])(
    '--signal %j: 64, one line',
    async (value) => {
      const { code, stderr } = await dlock(['run', '--redis', redis.url, '--signal', value, 'sig-bad', '--', 'true'], {
        env: env(),
      });
      expect(code).toBe(64);
      expect(stderr).toMatch(/^dlock: --signal: not a signal name or number .*\n$/);
      // Real-time signals are not among what it takes: the message does not send the user to kill -l.
      expect(stderr).not.toContain('kill -l');
    },
  );
});

test('dlock heartbeat outside a dlock: 64 and one "dlock: " line', async () => {
  const { code, stderr, stdout } = await dlock(['heartbeat'], { env: env() });
  expect(code).toBe(64);
  expect(stdout).toBe('');
  expect(stderr).toMatch(/^dlock: heartbeat: not under a dlock .*\n$/);
});

test('dlock heartbeat naming another key, or after its dlock ended: 76 and one line', async () => {
  const dir = tempDir();
  const save = `printf '%s' "$DLOCK_HEARTBEAT_FILE" > ${dir}/file.tmp; mv ${dir}/file.tmp ${dir}/file; "$D" heartbeat other`;
  const done = await run(['--heartbeat', '1s'], 'mine', ['sh', '-c', save]).result;
  expect(done.code).toBe(76);
  expect(done.stderr).toContain('dlock: heartbeat: "other" is not held here (the calling dlock holds "mine")');
  const file = await waitForFile(join(dir, 'file'));
  const after = await dlock(['heartbeat'], {
    env: env({ DLOCK_KEY: 'mine', DLOCK_TOKEN: 'x', DLOCK_HEARTBEAT_FILE: file }),
  });
  expect(after.code).toBe(76);
  expect(after.stderr).toMatch(/^dlock: heartbeat: .*heartbeat file is gone: the dlock has ended\n$/);
});

test('--max-hold 0, and a --max-hold not longer than --kill-after: 64 naming the option', async () => {
  const zero = await dlock(['run', '--redis', redis.url, '--max-hold', '0', 'k', '--', 'true'], { env: env() });
  expect(zero.code).toBe(64);
  expect(zero.stderr).toMatch(/^dlock: --max-hold: must be greater than zero/);
  const short = await dlock(
    ['run', '--redis', redis.url, '--max-hold', '1s', '--kill-after', '2s', 'k', '--', 'true'],
    {
      env: env(),
    },
  );
  expect(short.code).toBe(64);
  expect(short.stderr).toMatch(/^dlock: --max-hold: must be longer than --kill-after/);
  expect(short.stderr).toContain('the grace between SIGTERM and SIGKILL');
  // With --signal INT the messages name SIGINT, not SIGTERM.
  const int = ['--signal', 'INT', '--kill-after', '2s'];
  const intShort = await dlock(['run', '--redis', redis.url, ...int, '--max-hold', '1s', 'k', '--', 'true'], {
    env: env(),
  });
  expect(intShort.stderr).toContain('the grace between SIGINT and SIGKILL');
  const intLong = await dlock(['run', '--redis', redis.url, ...int, '--ttl', '3s', 'k', '--', 'true'], { env: env() });
  expect(intLong.code).toBe(64);
  expect(intLong.stderr).toContain('a command that ignores SIGINT is killed before its lease ends');
  const fast = await dlock(['run', '--redis', redis.url, '--heartbeat', '50ms', 'k', '--', 'true'], { env: env() });
  expect(fast.code).toBe(64);
  expect(fast.stderr).toMatch(/^dlock: --heartbeat: must be at least 100ms/);
});

test('status shows the holder held "… of --max-hold 1h" and its last heartbeat, once a renewal stored them', async () => {
  const holder = run(['--ttl', '600ms', '--max-hold', '1h', '--heartbeat', '10s'], 'shown', [
    'sh',
    '-c',
    '"$D" heartbeat && echo beaten >&2 && exec sleep 600',
  ]);
  // A renewal after the heartbeat (the command's stderr is dlock's): the first may come before it on a loaded machine.
  await holder.waitFor(/^beaten$[\s\S]*"renewed"/m);
  const text = await dlock(['status', '--redis', redis.url, 'shown'], { env: env() });
  expect(text.stdout).toMatch(/\n {2}bound {4}held \S+ of --max-hold 1h\n {2}beat {5}last heartbeat \S+ ago\n$/);
  const json = JSON.parse((await dlock(['status', '--redis', redis.url, '--json', 'shown'], { env: env() })).stdout);
  expect(json.holder).toMatchObject({ max_hold_ms: 3_600_000 });
  expect(Date.now() - json.holder.last_heartbeat_ms).toBeLessThan(10_000);
  holder.process.kill('SIGTERM');
  await holder.result;
});

test('--max-hold stops the whole command: sh -c "sleep & sleep & wait" leaves no sleep behind', async () => {
  const marker = `${600 + (process.pid % 97)}.25`;
  const done = await run(['--max-hold', '1s', '--kill-after', '500ms'], 'tree', [
    'sh',
    '-c',
    `sleep ${marker} & sleep ${marker} & wait`,
  ]).result;
  expect(done.code, done.stderr).toBe(124);
  const left = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0` && isAlive(Number(pid));
      } catch {
        return false;
      }
    });
  expect(left).toEqual([]);
});

describe('nested runs on other keys: a dlock heartbeat reaches every enclosing dlock that watches one', () => {
  // 3 s, not 1 s: between the middle run's last beat and the inner one's first, three dlocks start
  // (the inner two and a `dlock heartbeat`), which a loaded machine took over 1 s for; the whole
  // script still beats for 5 s and more, so beats that did not reach the outer run would miss.
  test('--heartbeat 3s o1 around --heartbeat 5m i1: DLOCK_HEARTBEAT_MS is 3000 and the beats reach the outer run', async () => {
    const beats = 'echo "$DLOCK_HEARTBEAT_MS"; for i in 1 2 3 4 5; do sleep .5; "$D" heartbeat || exit 9; done';
    const middle = `"$D" run --redis "$R" --heartbeat 5m hb-i1 -- sh -c '${beats}'`;
    const inner = `"$D" run --redis "$R" --heartbeat 5s hb-i2 -- "$D" run --redis "$R" hb-i3 -- sh -c '${beats}'`;
    const script = `${middle} && ${inner}`;
    const done = await spawnDlock(
      ['run', '--redis', redis.url, '--log-format', 'json', '--heartbeat', '3s', 'hb-o1', '--', 'sh', '-c', script],
      { env: env({ R: redis.url }) },
    ).result;
    expect(done.stderr).not.toContain('heartbeat-missed');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim().split('\n')).toEqual(['3000', '3000']);
  });

  test('a forged DLOCK_HEARTBEAT_ENCLOSING entry is refused (64) and never touched', async () => {
    const dir = tempDir();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'x');
    utimesSync(victim, 1_000_000, 1_000_000);
    const script = `DLOCK_HEARTBEAT_ENCLOSING="${victim}" "$D" heartbeat; echo "exit=$?"`;
    const done = await run(['--heartbeat', '5s'], 'hb-forged', ['sh', '-c', script]).result;
    expect(done.stdout).toBe('exit=64\n');
    expect(done.stderr).toContain('DLOCK_HEARTBEAT_ENCLOSING');
    expect(statSync(victim).mtimeMs).toBe(1_000_000_000);
  });
});
