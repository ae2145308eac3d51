// Holding a lock across the steps of a shell script (docs/guides/shell-scripts.md): `eval
// "$(dlock acquire ...)"` leaves a keeper that renews until `dlock release` or until the shell
// exits; release and renew are owner-checked; --no-keeper leaves nothing running.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, DLOCK, dlock, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { waitUntil } from '../../support/wait-until.mjs';
import {
  events,
  hold,
  isAlive,
  killLeftovers,
  onlyEvent,
  removeTempDirs,
  tempDir,
  waitForDeath,
  waitForFile,
} from '../fixtures/observe.js';

let server: RedisServer;
let admin: Redis;
/** Every process of this file carries this variable: how the tests find keepers they left. */
const TAG = `DLOCK_ACQUIRE_TEST=${process.pid}`;
/** A runtime directory of this file's own (keeper pid files, keeper.log). */
let runtime: string;

beforeAll(async () => {
  server = await RedisServer.start();
  admin = new Redis({ port: server.port });
  runtime = tempDir();
});
const scripts = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  killLeftovers();
  for (const script of scripts) script.kill('SIGKILL');
  scripts.clear();
  for (const pid of keepers()) process.kill(pid, 'SIGKILL');
});
afterAll(async () => {
  admin.disconnect();
  await server.close();
  removeTempDirs();
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const [name, value] = TAG.split('=');
  return cleanEnv({ [name]: value, XDG_RUNTIME_DIR: runtime, D: DLOCK, R: server.url, ...extra });
}

/** Keepers (`__keeper` processes) started by this file and still running. */
function keepers(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        return environ.includes(TAG) && environ.some((v) => v.startsWith('DLOCK_KEEPER=')) && isAlive(pid);
      } catch {
        return false;
      }
    });
}

/** `sh -c script`, with $D (dlock) and $R (the Redis URL) set; the script's stdout and stderr, and its pid. */
function sh(
  script: string,
  extra: Record<string, string> = {},
): { pid: number; result: Promise<Result>; stderr: () => string } {
  const child = spawn('sh', ['-c', script], { env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  scripts.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // 'close': after every holder of the pipes (the keeper holds stderr) is gone.
  const result = new Promise<Result>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { pid: child.pid!, result, stderr: () => stderr };
}

const contend = (key: string) => dlock(['run', '-n', '--redis', server.url, key, '--', 'true'], { env: env() });

test('a script acquires, sleeps past 3x the TTL while a contender keeps getting 75, releases; the contender then gets it', async () => {
  const dir = tempDir();
  const script = sh(`
    eval "$("$D" acquire --redis "$R" --ttl 1500ms --log-format json -v held)" || exit 9
    echo "$DLOCK_FENCING_TOKEN" > ${dir}/fence.tmp; mv ${dir}/fence.tmp ${dir}/fence
    sleep 5
    "$D" release --redis "$R" held
  `);
  await waitForFile(join(dir, 'fence'));
  const busy: (number | null)[] = [];
  let done: Result | undefined;
  void script.result.then((r) => (done = r));
  while (!done) {
    const contender = await contend('held');
    if (!done) busy.push(contender.code);
  }
  expect(done.code, done.stderr).toBe(0);
  // A loaded machine starts few contenders in 5 s; each one was turned away. (1.5s, not 1s: a 1s
  // lease renews with ~200ms to spare, which the contenders' starts can take from the keeper.)
  expect(busy.length).toBeGreaterThan(1);
  expect(new Set(busy)).toEqual(new Set([75]));
  expect((await contend('held')).code).toBe(0);
  // The keeper renewed it all along (every ttl/3 for 5 s; a 1.5 s lease needs at least 3).
  expect(events(done.stderr, 'renewed').length).toBeGreaterThanOrEqual(3);
  expect(events(done.stderr, 'lost')).toEqual([]);
  expect(keepers()).toEqual([]);
});

test('the shell SIGKILLed while holding: the lock is free within a second and no keeper is left', async () => {
  const dir = tempDir();
  // The shell runs short steps (a background one would hold the lock: acquire.background.test.ts);
  // they do not hold the pipes the test reads.
  const script = sh(
    `eval "$("$D" acquire --redis "$R" --ttl 10s --log-format json killed)"; echo ok > ${dir}/held; while :; do sleep 0.05 >/dev/null 2>&1; done`,
  );
  await waitForFile(join(dir, 'held'));
  const keeperPid = Number(await admin.hget('dlock:{killed}', 'pid'));
  expect(keepers()).toEqual([keeperPid]);
  const killedAt = Date.now();
  process.kill(script.pid, 'SIGKILL');
  await waitForDeath(keeperPid, 5_000);
  const { stderr } = await script.result;
  const released = onlyEvent(stderr, 'released');
  expect(released).toMatchObject({ key: 'killed', released: true });
  expect(released.ts_ms - killedAt).toBeLessThan(1_000);
  expect(await admin.exists('dlock:{killed}')).toBe(0);
  expect(keepers()).toEqual([]);
  expect(readdirSync(join(runtime, 'dlock')).filter((f) => f.endsWith('.pid'))).toEqual([]);
});

test('a foreign token: release and renew exit 76 and leave the lock untouched; without a token, 64', async () => {
  const dir = tempDir();
  const script = sh(`
    trap 'echo TERM > ${dir}/signal.tmp; mv ${dir}/signal.tmp ${dir}/signal; exit 143' TERM
    eval "$("$D" acquire --redis "$R" --ttl 3s foreign)"
    echo "$DLOCK_TOKEN" > ${dir}/token.tmp; mv ${dir}/token.tmp ${dir}/token
    while [ ! -e ${dir}/stop ]; do sleep 0.05; done
    "$D" release --redis "$R" foreign; echo $? > ${dir}/released.tmp; mv ${dir}/released.tmp ${dir}/released
    sleep 1
  `);
  // A 3s lease: the keeper must hold through four dlock starts on a loaded machine (a 600ms one
  // renews with ~130ms to spare).
  const token = (await waitForFile(join(dir, 'token'))).trim();
  const before = await admin.hgetall('dlock:{foreign}');
  expect(before.owner).toBe(token);
  const other = 'ffffffffffffffffffffffffffffffff';
  for (const command of ['release', 'renew']) {
    const result = await dlock([command, '--redis', server.url, '--token', other, 'foreign'], { env: env() });
    expect(result.code, result.stderr).toBe(76);
    expect(result.stderr).toBe(
      "dlock: foreign was no longer this owner's (it expired or was taken): the section ran unprotected at some point\n",
    );
  }
  // DLOCK_TOKEN counts only for the key DLOCK_KEY names.
  const wrongKey = await dlock(['release', '--redis', server.url, 'foreign'], {
    env: env({ DLOCK_KEY: 'elsewhere', DLOCK_TOKEN: token }),
  });
  expect(wrongKey.code).toBe(64);
  expect(wrongKey.stderr).toMatch(/^dlock: release needs the owner token/);
  expect(await admin.hgetall('dlock:{foreign}')).toEqual(before);
  expect(keepers()).toHaveLength(1);
  writeFileSync(join(dir, 'stop'), '');
  // The owner's release stops the keeper before it returns, and the shell hears nothing of it.
  expect(await waitForFile(join(dir, 'released'))).toBe('0\n');
  expect(keepers()).toEqual([]);
  expect(await admin.exists('dlock:{foreign}')).toBe(0);
  expect((await script.result).code).toBe(0);
  expect(existsSync(join(dir, 'signal'))).toBe(false);
});

test('release --force while a keeper holds: the watched process gets SIGTERM and the keeper says why', async () => {
  const dir = tempDir();
  const script = sh(`
    trap 'echo TERM > ${dir}/signal.tmp; mv ${dir}/signal.tmp ${dir}/signal; exit 143' TERM
    eval "$("$D" acquire --redis "$R" --ttl 3s --log-format json forced)"
    echo ok > ${dir}/held
    while :; do sleep 0.05; done
  `);
  // A 3s lease: it must still be held (and lost by "refused") once release's dlock has started on a loaded machine.
  await waitForFile(join(dir, 'held'));
  const forced = await dlock(['release', '--force', '--redis', server.url, 'forced'], { env: env() });
  expect(forced.code, forced.stderr).toBe(0);
  expect(await waitForFile(join(dir, 'signal'))).toBe('TERM\n');
  const { code, stderr } = await script.result;
  expect(code).toBe(143);
  expect(onlyEvent(stderr, 'lost')).toMatchObject({
    key: 'forced',
    reason: 'refused',
    pid: script.pid,
    signal: 'SIGTERM',
  });
  expect(keepers()).toEqual([]);
});

test('a watched shell that ignores SIGTERM is SIGKILLed when its grace (--kill-after, at most ttl/3) ends', async () => {
  const dir = tempDir();
  const script = sh(`
    trap '' TERM
    eval "$("$D" acquire --redis "$R" --ttl 3s --log-format json stubborn)"
    echo ok > ${dir}/held
    while :; do sleep 0.05; done
  `);
  // A 3s lease, as above: still held (and lost by "refused") once release's dlock has started.
  await waitForFile(join(dir, 'held'));
  const forced = await dlock(['release', '--force', '--redis', server.url, 'stubborn'], { env: env() });
  expect(forced.code, forced.stderr).toBe(0);
  const forcedAt = Date.now();
  // Without the follow-up the shell runs on: give up well after the grace (1s for a 3s lease).
  const ended = await Promise.race([
    script.result,
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 5_000)),
  ]);
  expect(ended, 'the shell still runs 5s after the loss').toBeDefined();
  const { signal, stderr } = ended!;
  expect(signal).toBe('SIGKILL');
  expect(Date.now() - forcedAt).toBeGreaterThanOrEqual(300);
  expect(onlyEvent(stderr, 'lost')).toMatchObject({ key: 'stubborn', pid: script.pid, signal: 'SIGTERM' });
  expect(events(stderr, 'signal').map((e) => [e.signal, e.reason, e.pid])).toEqual([
    ['SIGTERM', 'lost', script.pid],
    ['SIGKILL', 'kill-after', script.pid],
  ]);
  await waitUntil('the keeper to exit', () => keepers().length === 0);
});

test('--no-keeper, then renew and release from two more processes', async () => {
  const acquired = await dlock(
    ['acquire', '--no-keeper', '--redis', server.url, '--ttl', '3s', '--format', 'json', 'steps'],
    { env: env() },
  );
  expect(acquired.code, acquired.stderr).toBe(0);
  const section = JSON.parse(acquired.stdout) as { key: string; token: string; fence: string; ttl_ms: number };
  expect(section).toMatchObject({ key: 'steps', fence: '1', ttl_ms: 3000 });
  expect(section.token).toMatch(/^[0-9a-f]{32}$/);
  expect(keepers()).toEqual([]);
  // Nothing renews it: the lease runs down.
  await waitUntil('the lease to run down', async () => (await admin.pttl('dlock:{steps}')) < 2_000);

  const renewed = await dlock(['renew', '--redis', server.url, '--token', section.token, 'steps'], { env: env() });
  expect(renewed.code, renewed.stderr).toBe(0);
  expect(await admin.pttl('dlock:{steps}')).toBeGreaterThan(2_500);
  expect(await admin.hget('dlock:{steps}', 'owner')).toBe(section.token);

  const released = await dlock(['release', '--redis', server.url, 'steps'], {
    env: env({ DLOCK_KEY: 'steps', DLOCK_TOKEN: section.token }),
  });
  expect(released.code, released.stderr).toBe(0);
  expect(released.stderr).toBe('');
  expect(await admin.exists('dlock:{steps}')).toBe(0);
  // Gone now: it does not renew. Released again by its owner on this host: nothing left to do (0);
  // from a host that did not release it (another runtime directory), the section was broken: 76.
  expect((await dlock(['renew', '--redis', server.url, '--token', section.token, 'steps'], { env: env() })).code).toBe(
    76,
  );
  const again = await dlock(['release', '--redis', server.url, '--token', section.token, '-v', 'steps'], {
    env: env(),
  });
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toMatch(/steps was released already by this owner/);
  const elsewhere = await dlock(['release', '--redis', server.url, '--token', section.token, 'steps'], {
    env: env({ XDG_RUNTIME_DIR: tempDir() }),
  });
  expect(elsewhere.code, elsewhere.stderr).toBe(76);
});

test('sh format: export lines that eval safely; a nested dlock run in the section runs under its lock', async () => {
  const dir = tempDir();
  const script = sh(`
    out=$("$D" acquire --redis "$R" --ttl 2s 'we'"'"'ird$key')
    printf '%s\\n' "$out" > ${dir}/exports
    eval "$out"
    "$D" run -n --redis "$R" --log-format json -v "$DLOCK_KEY" -- sh -c 'echo "$DLOCK_FENCING_TOKEN" > ${dir}/nested'
    echo "nested=$?"
    "$D" release --redis "$R" "$DLOCK_KEY"
  `);
  const { code, stdout, stderr } = await script.result;
  expect(code, stderr).toBe(0);
  expect(stdout).toBe('nested=0\n');
  expect(readFileSync(join(dir, 'exports'), 'utf8')).toMatch(
    /^export DLOCK_KEY='we'\\''ird\$key'\nexport DLOCK_TOKEN='[0-9a-f]{32}'\nexport DLOCK_FENCING_TOKEN='1'\nexport DLOCK_TTL_MS='2000'\n$/,
  );
  expect(readFileSync(join(dir, 'nested'), 'utf8')).toBe('1\n');
  expect(onlyEvent(stderr, 'acquired')).toMatchObject({ key: "we'ird$key", reentrant: true });
});

test('a nested acquire of the held key prints the same variables and takes nothing; --slots exports DLOCK_SLOT', async () => {
  const dir = tempDir();
  const script = sh(`
    eval "$("$D" acquire --redis "$R" --ttl 2s --slots 2 again)"
    outer="$DLOCK_TOKEN $DLOCK_FENCING_TOKEN $DLOCK_SLOT"
    eval "$("$D" acquire --redis "$R" --ttl 2s --slots 2 -n --log-format json -v again)" || exit 9
    echo "$outer|$DLOCK_TOKEN $DLOCK_FENCING_TOKEN $DLOCK_SLOT|$DLOCK_NESTED" > ${dir}/tokens
    # In the same shell DLOCK_NESTED stays set: this release leaves the lock (to the shell's exit)...
    "$D" release --redis "$R" again || exit 8
    "$D" status --redis "$R" again > /dev/null; echo "held=$?"
    # ...and once it is unset, the section's own release releases it.
    unset DLOCK_NESTED
    "$D" release --redis "$R" again || exit 7
    "$D" status --redis "$R" again > /dev/null; echo "free=$?"
  `);
  const { code, stdout, stderr } = await script.result;
  expect(code, stderr).toBe(0);
  expect(stdout).toBe('held=0\nfree=1\n');
  const [outer, inner, nested] = readFileSync(join(dir, 'tokens'), 'utf8').trim().split('|');
  expect(outer).toMatch(/^[0-9a-f]{32} \d+ 0$/);
  expect(inner).toBe(outer);
  expect(nested).toBe(outer!.split(' ')[0]);
  expect(onlyEvent(stderr, 'acquired')).toMatchObject({ key: 'again', reentrant: true });
  expect(await admin.exists('dlock:{again}')).toBe(0);
  expect(keepers()).toEqual([]);
});

test("a nested section's release leaves the enclosing dlock run's lock held, and its command protected", async () => {
  const script = `
    eval "$("$D" acquire --redis "$R" in-run)" || exit 9
    "$D" release --redis "$R" -v in-run; echo "release=$?"
    "$D" status --redis "$R" in-run > /dev/null; echo "held=$?"
  `;
  const result = await dlock(['run', '--redis', server.url, 'in-run', '--', 'sh', '-c', script], { env: env() });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toBe('release=0\nheld=0\n');
  expect(result.stderr).toBe(
    'dlock: in-run is held by an enclosing dlock: left held for it (it releases the lock when it ends)\n',
  );
  expect(await admin.exists('dlock:{in-run}')).toBe(0);
});

test("a nested section's release in a child shell leaves the outer section's lock and keeper; 76 once it is lost", async () => {
  const script = sh(`
    eval "$("$D" acquire --redis "$R" in-section)" || exit 9
    sh -c '
      eval "$("$D" acquire --redis "$R" in-section)" || exit 9
      "$D" acquire --redis "$R" --format json in-section
      "$D" release --redis "$R" in-section
    ' || exit 8
    "$D" status --redis "$R" in-section > /dev/null; echo "held=$?"
    "$D" release --redis "$R" in-section; echo "released=$?"
    "$D" status --redis "$R" in-section > /dev/null; echo "free=$?"
    eval "$("$D" acquire --redis "$R" --no-keeper --ttl 20s gone)" || exit 6
    eval "$("$D" acquire --redis "$R" gone)" || exit 5
    "$D" release --redis "$R" --force --now gone > /dev/null
    "$D" release --redis "$R" gone; echo "lost=$?"
  `);
  const { code, stdout, stderr } = await script.result;
  expect(code, stderr).toBe(0);
  const [json, ...statuses] = stdout.trim().split('\n');
  expect(JSON.parse(json!)).toMatchObject({ key: 'in-section', nested: true });
  expect(statuses).toEqual(['held=0', 'released=0', 'free=1', 'lost=76']);
  expect(stderr).toMatch(/^dlock: gone was no longer this owner's \(it expired or was taken\)/m);
  expect(keepers()).toEqual([]);
});

test('$(dlock acquire ...) returns as soon as the lock is held, with stderr captured too, while the keeper goes on', async () => {
  // 3s leases: the first keeper must hold while the second dlock starts on a loaded machine.
  const dir = tempDir();
  const script = sh(`
    out=$("$D" acquire --redis "$R" --ttl 3s --log-format json -v prompt 2>${dir}/log)
    date +%s%3N > ${dir}/returned.tmp; mv ${dir}/returned.tmp ${dir}/returned
    both=$("$D" acquire --redis "$R" --ttl 3s prompt2 2>&1)
    echo ok > ${dir}/both
    while [ ! -e ${dir}/stop ]; do sleep 0.05; done
  `);
  const returned = Number(await waitForFile(join(dir, 'returned')));
  await waitForFile(join(dir, 'both'));
  const acquired = onlyEvent(readFileSync(join(dir, 'log'), 'utf8'), 'acquired');
  expect(returned - acquired.ts_ms).toBeLessThan(500);
  expect(keepers()).toHaveLength(2);
  expect(await admin.hget('dlock:{prompt}', 'owner')).toMatch(/^[0-9a-f]{32}$/);
  expect(await admin.hget('dlock:{prompt2}', 'owner')).toMatch(/^[0-9a-f]{32}$/);
  writeFileSync(join(dir, 'stop'), '');
  await script.result;
  await waitUntil(
    'both keepers to release',
    async () => (await admin.exists('dlock:{prompt}', 'dlock:{prompt2}')) === 0,
  );
  await waitUntil('both keepers to exit', () => keepers().length === 0);
});

test('busy 75, unreachable 69 and usage errors 64 leave nothing running and nothing held', async () => {
  const holder = hold('taken', { redis: server.url });
  await holder.child();
  const cases: [string[], number, RegExp][] = [
    [['acquire', '-n', '--redis', server.url, 'taken'], 75, /^dlock: taken is busy \(held by .*\); not acquired\n$/],
    // A status line when the wait starts, if the holder was read before the wait ran out.
    [
      ['acquire', '--wait', '300ms', '--redis', server.url, 'taken'],
      75,
      /^(dlock: waiting for taken \(1st in line; [^\n]*\)\n)?dlock: taken is busy .*not acquired within 300ms\n$/,
    ],
    [['acquire', '-n', '-E', '0', '--format', 'json', '--redis', server.url, 'taken'], 0, /^$/],
    [
      ['acquire', '--redis', 'redis://127.0.0.1:1', '--connect-timeout', '500ms', 'free'],
      69,
      /^dlock: .*127\.0\.0\.1:1.*\n$/,
    ],
    [['acquire', '--ttl', '5x', '--redis', server.url, 'free'], 64, /^dlock: --ttl: not a duration/],
    [['acquire', '--pid', '999999999', '--redis', server.url, 'free'], 64, /^dlock: --pid: /],
  ];
  for (const [args, code, message] of cases) {
    const result = await dlock(args, { env: env() });
    expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(code);
    expect(result.stderr).toMatch(message);
    // For eval: a line that fails with acquire's status (shell-idioms.test.ts runs it); JSON: nothing.
    expect(result.stdout).toBe(code === 0 ? '' : `case $- in *i*) (exit ${code}) ;; *) exit ${code} ;; esac\n`);
    expect(keepers()).toEqual([]);
  }
  expect(await admin.exists('dlock:{free}')).toBe(0);
  holder.stop();
  expect((await holder.result).code).toBe(0);
});

test('Ctrl-C while waiting: 130, and the keeper stops waiting with nothing held', async () => {
  const holder = hold('interrupt', { redis: server.url });
  await holder.child();
  const dir = tempDir();
  const script = sh(
    `"$D" acquire --redis "$R" --log-format json -v interrupt & echo $! > ${dir}/pid.tmp; mv ${dir}/pid.tmp ${dir}/pid; wait $!; echo "code=$?"`,
  );
  const pid = Number(await waitForFile(join(dir, 'pid')));
  await waitUntil('the keeper to wait', () => script.stderr().includes('"waiting"'));
  process.kill(pid, 'SIGINT');
  const { stdout } = await script.result;
  expect(stdout).toBe('case $- in *i*) (exit 130) ;; *) exit 130 ;; esac\ncode=130\n');
  expect(keepers()).toEqual([]);
  holder.stop();
  await holder.result;
  expect(await admin.exists('dlock:{interrupt}')).toBe(0);
});

test('a keeper whose stderr is gone writes the lost lock to keeper.log in the runtime directory', async () => {
  const logFile = join(runtime, 'dlock', 'keeper.log');
  // 3s leases: still held (and lost by "refused") once release's dlock has started on a loaded machine.
  const setups = {
    // stderr captured with stdout by $(...): the keeper is given none.
    captured: `out=$("$D" acquire --redis "$R" --ttl 3s gone-captured 2>&1); eval "$out"`,
    // stderr a pipe whose reader exits after the acquire.
    'reader-exited': `mkfifo "$DIR/fifo"; cat "$DIR/fifo" >/dev/null & eval "$("$D" acquire --redis "$R" --ttl 3s gone-reader-exited 2>"$DIR/fifo")"; kill $!`,
  };
  for (const [name, setup] of Object.entries(setups)) {
    const dir = tempDir();
    const script = sh(`trap 'exit 143' TERM; ${setup}; echo ok > "$DIR/held"; while :; do sleep 0.05; done`, {
      DIR: dir,
    });
    await waitForFile(join(dir, 'held'));
    expect((await dlock(['release', '--force', '--redis', server.url, `gone-${name}`], { env: env() })).code).toBe(0);
    expect((await script.result).code).toBe(143);
    const lost = await waitUntil('the lost event in keeper.log', () =>
      events(readFileSync(logFile, 'utf8'), 'lost').find((e) => e.key === `gone-${name}`),
    );
    expect(lost).toMatchObject({
      reason: 'refused',
      signal: 'SIGTERM',
      message: expect.stringMatching(/^lost gone-\S+ \(fence \d+\): renewal refused/),
    });
  }
  await waitUntil('the keepers to exit', () => keepers().length === 0);
});

// The keeper watches the shell that runs the section, not whatever process started dlock: bash
// forks a subshell for `$(dlock acquire k 2>/dev/null)`, and `timeout` or a wrapper function
// stands between them too; each exits with acquire, and watching it released the lock at once.
describe.each(['dash', 'bash', 'zsh'])(
  '%s: the keeper watches the shell reading acquire, whatever runs between',
  (shell) => {
    test.each([
      ['a redirection inside $(…)', 'eval "$("$D" acquire --redis "$R" --ttl 10s KEY 2>/dev/null)" || exit 9'],
      ['timeout in front', 'eval "$(timeout 60 "$D" acquire --redis "$R" --ttl 10s KEY)" || exit 9'],
      ['a wrapper function', 'acq() { "$D" acquire --redis "$R" --ttl 10s "$@"; }; eval "$(acq KEY)" || exit 9'],
      [
        'the handle-busy form',
        'if vars=$("$D" acquire -n --redis "$R" --ttl 10s KEY 2>/dev/null); then eval "$vars"; else exit 9; fi',
      ],
    ])('%s', async (_, section) => {
      const dir = tempDir();
      const key = `watched-${shell}-${_.replace(/\W+/g, '-')}`;
      spawnSync('mkfifo', [join(dir, 'go')]);
      const child = spawn(
        shell,
        [
          '-c',
          `${section.replace('KEY', key)}\necho held > ${dir}/held\nread go < ${dir}/go\n"$D" release --redis "$R" ${key}`,
        ],
        {
          env: env(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      scripts.add(child);
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await waitForFile(join(dir, 'held'));
      // The holder is the keeper for the script's own shell: the lock lasts as long as it does.
      expect(await admin.hget(`dlock:{${key}}`, 'cmd'), stderr).toBe(`dlock acquire (keeper for pid ${child.pid})`);
      expect((await dlock(['status', '--redis', server.url, key], { env: env() })).code).toBe(0);
      writeFileSync(join(dir, 'go'), 'go\n');
      expect(await exited, stderr).toBe(0);
      expect(await admin.exists(`dlock:{${key}}`)).toBe(0);
    });
  },
);
