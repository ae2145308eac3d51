// The suite's lock behaviour rows on etcd (issue 34), against one real etcd member: what
// run.exclusion, run.exit-codes, run.signals, run.lease, acquire and run.nested show on Redis,
// their essential assertions with an etcd:// URL. Time bounds come from the events' own ts_ms.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { EtcdServer } from '../../support/etcd-server.mjs';
import { cleanEnv, DLOCK, dlock, start, type Result, type Running } from '../helpers/cli.js';
import { exitWithin, leases, lineOf, useEtcdServer } from '../helpers/etcd.js';
import {
  childPid,
  CRITICAL,
  events,
  hold,
  HOLD,
  isAlive,
  onlyEvent,
  signalsSeen,
  spawnDlock,
  tempDir,
  waitForDeath,
  waitForFile,
} from '../fixtures/observe.js';

let etcd: EtcdServer;
useEtcdServer((server) => (etcd = server));

/** The keys of dlock's lock `key` (default --prefix `dlock:`), holder first. */
const lineOfKey = (key: string) => lineOf(etcd, `dlock:${key}`);
/** The lease a holder's DLOCK_TOKEN names: its last 16 hex digits, as etcdctl prints lease ids. */
const leaseOf = (token: string) => token.slice(16);

test("--ttl 500ms: DLOCK_TTL_MS is etcd's minimum (2000), and the command gets ETCD_LOCK_KEY and ETCD_LOCK_REV", async () => {
  const result = await dlock([
    'run',
    '--redis',
    etcd.url,
    '--ttl',
    '500ms',
    '--log-format',
    'json',
    'env',
    '--',
    'sh',
    '-c',
    'env | grep -E "^(DLOCK|ETCD)_" | sort',
  ]);
  expect(result.code, result.stderr).toBe(0);
  const env = Object.fromEntries(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const fence = onlyEvent(result.stderr, 'acquired').fence!;
  expect(env).toEqual({
    DLOCK_KEY: 'env',
    DLOCK_FENCING_TOKEN: fence,
    DLOCK_TOKEN: expect.stringMatching(/^0{16}[0-9a-f]{16}$/),
    DLOCK_TTL_MS: '2000',
    ETCD_LOCK_KEY: `dlock:env/${leaseOf(env.DLOCK_TOKEN)}`,
    // Taken at once: the revision of the txn that wrote the key, which is its create revision.
    ETCD_LOCK_REV: fence,
  });
  // Released: the key deleted and its lease revoked (etcdctl lock only deletes).
  expect(await lineOfKey('env')).toEqual([]);
  expect(await leases(etcd)).not.toContain(leaseOf(env.DLOCK_TOKEN));
});

test('mutual exclusion: 8 concurrent runs of a read-sleep-write counter end at 8, sections never overlap, fences go up', async () => {
  const dir = tempDir();
  const counter = join(dir, 'counter');
  const log = join(dir, 'sections');
  const runs = Array.from({ length: 8 }, () =>
    dlock(['run', '--redis', etcd.url, '-t', '5s', 'counter', '--', CRITICAL, counter, log]),
  );
  const results = await Promise.all(runs);
  expect(results.map((r) => r.code)).toEqual(Array(8).fill(0));
  expect(readFileSync(counter, 'utf8').trim()).toBe('8');
  const sections = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([begin, end, fence]) => ({ begin: BigInt(begin), end: BigInt(end), fence: BigInt(fence) }))
    .sort((a, b) => (a.begin < b.begin ? -1 : 1));
  expect(sections).toHaveLength(8);
  for (let i = 1; i < sections.length; i++) {
    expect(sections[i].begin).toBeGreaterThan(sections[i - 1].end);
    expect(sections[i].fence).toBeGreaterThan(sections[i - 1].fence);
  }
  expect(await lineOfKey('counter')).toEqual([]);
});

test("fencing tokens strictly increase across holders, also after a SIGKILLed holder's lease expired", async () => {
  const fences: bigint[] = [];
  const acquiredFence = (result: Result) => BigInt(onlyEvent(result.stderr, 'acquired').fence!);
  for (let i = 0; i < 2; i++) {
    const result = await dlock(['run', '--redis', etcd.url, '--log-format', 'json', 'fence', '--', 'true']);
    expect(result.code, result.stderr).toBe(0);
    fences.push(acquiredFence(result));
  }
  // Nobody releases: the next holder gets the lock once etcd expired the lease (2 s, etcd's minimum).
  const killed = hold('fence', { redis: etcd.url, flags: ['-t', '2s'] });
  const { pid, env } = await killed.child();
  fences.push(BigInt(env.DLOCK_FENCING_TOKEN));
  killed.process.kill('SIGKILL');
  await waitForDeath(pid);
  expect((await lineOfKey('fence')).map((k) => k.lease)).toEqual([leaseOf(env.DLOCK_TOKEN)]);
  const next = await dlock(['run', '--redis', etcd.url, '--log-format', 'json', '-w', '10s', 'fence', '--', 'true']);
  expect(next.code, next.stderr).toBe(0);
  fences.push(acquiredFence(next));
  console.log(`fences on etcd: ${fences.join(' < ')}`);
  for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
});

describe('busy: 75', () => {
  let holder: Running;
  let holdDir: string;
  beforeAll(async () => {
    holdDir = tempDir();
    // Not spawnDlock: the holder must outlive each test of this group.
    holder = start(['run', '--redis', etcd.url, '--log-format', 'json', 'busy', '--', HOLD, holdDir]);
    await childPid(holdDir);
  });
  afterAll(async () => {
    writeFileSync(join(holdDir, 'stop'), '');
    expect((await holder.result).code).toBe(0);
  });

  test('-n: 75 at once with one line naming the holder; -E 0: exit 0 quietly; the command never runs', async () => {
    const marker = join(holdDir, 'busy-ran');
    const busy = await dlock(['run', '--redis', etcd.url, '-n', 'busy', '--', 'touch', marker]);
    expect(busy.code).toBe(75);
    expect(busy.stderr).toMatch(/^dlock: busy is busy \(held by .* pid \d+.*\n$/);
    const quiet = await dlock(['run', '--redis', etcd.url, '-n', '-E', '0', 'busy', '--', 'touch', marker]);
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(marker)).toBe(false);
    // The contenders left no key behind: the line is the holder alone.
    expect(await lineOfKey('busy')).toHaveLength(1);
  });

  test("--wait 400ms: 75 after about that long, by the events' own clock", async () => {
    const result = await dlock([
      'run',
      '--redis',
      etcd.url,
      '--wait',
      '400ms',
      '--log-format',
      'json',
      'busy',
      '--',
      'true',
    ]);
    expect(result.code, result.stderr).toBe(75);
    const waiting = onlyEvent(result.stderr, 'waiting');
    const busy = onlyEvent(result.stderr, 'busy');
    expect(busy.waited_ms).toBeGreaterThanOrEqual(400);
    const elapsed = busy.ts_ms - (waiting.ts_ms - waiting.waited_ms!);
    expect(elapsed).toBeGreaterThanOrEqual(400 - 1);
    expect(elapsed).toBeLessThan(400 + 2000);
    expect(await lineOfKey('busy')).toHaveLength(1);
  });

  // [the event the SIGTERM follows at once]: "waiting" is written before dlock reads the holder for
  // the first wait-status and then watches its predecessor; "wait-status" once it watches.
  test.for(['waiting', 'wait-status'])(
    'SIGTERM right after the "%s" event: 143 within 2 s, the command never runs, the holder keeps the lock',
    async (event) => {
      const marker = join(holdDir, `waiter-ran-${event}`);
      const before = await lineOfKey('busy');
      const waiter = spawnDlock(['run', '--redis', etcd.url, '--log-format', 'json', 'busy', '--', 'touch', marker]);
      await waiter.waitFor(`"event":"${event}"`);
      waiter.process.kill('SIGTERM');
      const result = await exitWithin(waiter, 2_000);
      expect(result, `still waiting 2 s after SIGTERM; stderr:\n${waiter.stderr()}`).toBeDefined();
      expect(result!.code).toBe(143);
      expect(existsSync(marker)).toBe(false);
      // Its own key left the line; the holder's is still first.
      expect(await lineOfKey('busy')).toEqual(before);
    },
  );
});

describe("the command's status passes through, and the lock is released", () => {
  test.for([
    ['exit 3', 3],
    ['kill -TERM $$', 143],
    ['kill -KILL $$', 137],
  ] as const)('sh -c %j -> %d', async ([script, code]) => {
    const key = `status-${code}`;
    const result = await dlock(['run', '--redis', etcd.url, key, '--', 'sh', '-c', script]);
    expect(result.code).toBe(code);
    expect(result.stderr).toBe('');
    expect(await lineOfKey(key)).toEqual([]);
  });
});

test('SIGTERM to dlock while the command runs: forwarded, 143, the key deleted and the lease revoked', async () => {
  const holder = hold('sig-term', { redis: etcd.url });
  const { pid, env } = await holder.child();
  holder.process.kill('SIGTERM');
  const result = await holder.result;
  expect(result.code).toBe(143);
  expect(signalsSeen(holder.dir)).toEqual(['TERM']);
  expect(isAlive(pid)).toBe(false);
  expect(onlyEvent(result.stderr, 'released').released).toBe(true);
  expect(await lineOfKey('sig-term')).toEqual([]);
  expect(await leases(etcd)).not.toContain(leaseOf(env.DLOCK_TOKEN));
});

test('the lease revoked from outside (etcdctl lease revoke): the command gets SIGTERM and dlock exits 76', async () => {
  // 2 s: renewal every 667 ms; the bound below is that interval and a margin.
  const holder = hold('revoked', { redis: etcd.url, flags: ['-t', '2s'] });
  const { pid, env } = await holder.child();
  expect((await etcd.etcdctl('lease', 'list')).stdout).toContain(leaseOf(env.DLOCK_TOKEN));
  // Taken before the revoke: the interval measured can only be longer than the real one.
  const revokedAt = Date.now();
  const revoke = await etcd.etcdctl('lease', 'revoke', leaseOf(env.DLOCK_TOKEN));
  expect(revoke.code, revoke.stderr).toBe(0);
  await waitForDeath(pid);
  const result = await holder.result;
  expect(result.code, result.stderr).toBe(76);
  expect(signalsSeen(holder.dir)).toEqual(['TERM']);
  expect(existsSync(join(holder.dir, 'done'))).toBe(false);
  expect(onlyEvent(result.stderr, 'lost').message).toMatch(/; terminating the command$/);
  const signal = onlyEvent(result.stderr, 'signal');
  expect(signal).toMatchObject({ signal: 'SIGTERM', reason: 'lost' });
  expect(onlyEvent(result.stderr, 'error')).toMatchObject({
    exit_code: 76,
    message: expect.stringMatching(/^lost the lock revoked while the command ran/),
  });
  console.log(
    `SIGTERM to the command ${Math.round(signal.ts_ms - revokedAt)}ms after the revoke (renewal every 667ms)`,
  );
  expect(signal.ts_ms - revokedAt).toBeLessThan(667 + 1000);
});

describe('the keeper', () => {
  const scripts = new Set<ReturnType<typeof spawn>>();
  afterEach(() => {
    for (const script of scripts) script.kill('SIGKILL');
    scripts.clear();
  });

  /** `sh -c script` with $D (dlock) and $U (the etcd URL); resolves once every holder of its pipes (the keeper's stderr) is gone. */
  function sh(script: string): Promise<Result> {
    const env = cleanEnv({ D: DLOCK, U: etcd.url, XDG_RUNTIME_DIR: tempDir() });
    const child = spawn('sh', ['-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    scripts.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  }

  test('eval "$(dlock acquire k)": the keeper renews past the TTL, renew, a nested run under it, release', async () => {
    const dir = tempDir();
    const script = sh(`
      eval "$("$D" acquire --redis "$U" --ttl 500ms --log-format json -v kept)" || exit 9
      echo "$DLOCK_TOKEN $DLOCK_FENCING_TOKEN $DLOCK_TTL_MS $ETCD_LOCK_KEY" > ${dir}/held.tmp; mv ${dir}/held.tmp ${dir}/held
      while [ ! -e ${dir}/go ]; do sleep 0.05; done
      "$D" renew --redis "$U" kept; echo "renew=$?"
      "$D" run -n --redis "$U" --log-format json kept -- sh -c 'echo "nested $DLOCK_FENCING_TOKEN"'; echo "nested=$?"
      "$D" release --redis "$U" kept; echo "release=$?"
    `);
    const [token, fence, ttlMs, etcdKey] = (await waitForFile(join(dir, 'held'))).trim().split(' ');
    expect(ttlMs).toBe('2000');
    expect(etcdKey).toBe(`dlock:kept/${leaseOf(token)}`);
    // Past the lease etcd applied (2 s): the keeper keeps it alive, contenders get 75 throughout.
    const since = Date.now();
    while (Date.now() - since < 3_000)
      expect((await dlock(['run', '--redis', etcd.url, '-n', 'kept', '--', 'true'])).code).toBe(75);
    const ttl = await etcd.etcdctl('lease', 'timetolive', leaseOf(token));
    expect(ttl.stdout).toMatch(/granted with TTL\(2s\), remaining\([12]s\)/);
    writeFileSync(join(dir, 'go'), '');
    const done = await script;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe(`renew=0\nnested ${fence}\nnested=0\nrelease=0\n`);
    expect(events(done.stderr, 'renewed').length).toBeGreaterThanOrEqual(4);
    expect(events(done.stderr, 'lost')).toEqual([]);
    expect(events(done.stderr, 'acquired')).toEqual([
      expect.objectContaining({ fence }),
      expect.objectContaining({ fence, reentrant: true }),
    ]);
    expect(onlyEvent(done.stderr, 'released')).toMatchObject({ released: true, by: 'release' });
    expect(await lineOfKey('kept')).toEqual([]);
    expect(await leases(etcd)).not.toContain(leaseOf(token));
  });
  test("the keeper's lease revoked from outside: it sends the watched shell SIGTERM", async () => {
    const dir = tempDir();
    const script = sh(`
      eval "$("$D" acquire --redis "$U" --ttl 2s --log-format json revoked-kept)" || exit 9
      trap 'echo TERM > ${dir}/signals; exit 143' TERM
      echo "$DLOCK_TOKEN" > ${dir}/token.tmp; mv ${dir}/token.tmp ${dir}/token
      while :; do sleep 0.05; done
    `);
    const token = (await waitForFile(join(dir, 'token'))).trim();
    const revokedAt = Date.now();
    expect((await etcd.etcdctl('lease', 'revoke', leaseOf(token))).code).toBe(0);
    const done = await script;
    expect(done.code, done.stderr).toBe(143);
    expect(readFileSync(join(dir, 'signals'), 'utf8')).toBe('TERM\n');
    const lost = onlyEvent(done.stderr, 'lost');
    expect(lost).toMatchObject({ reason: 'refused', signal: 'SIGTERM' });
    // Noticed at the keeper's next renewal (every 667 ms).
    expect(lost.ts_ms - revokedAt).toBeLessThan(667 + 1000);
  });
});

test('a nested dlock run on the held key runs at once under the same fence', async () => {
  const script = [
    `"$0" run -n --redis "$U" --log-format json nested -- sh -c 'echo "inner $DLOCK_FENCING_TOKEN"'`,
    'echo "inner exit $?"',
    'echo "outer $DLOCK_FENCING_TOKEN"',
  ].join('; ');
  const result = await dlock(['run', '--redis', etcd.url, 'nested', '--', 'sh', '-c', script, DLOCK], {
    env: cleanEnv({ U: etcd.url }),
  });
  expect(result.code, result.stderr).toBe(0);
  const outer = result.stdout.match(/^outer (\d+)$/m)![1];
  expect(result.stdout).toBe(`inner ${outer}\ninner exit 0\nouter ${outer}\n`);
  expect(onlyEvent(result.stderr, 'acquired')).toMatchObject({ reentrant: true, fence: outer });
  expect(await lineOfKey('nested')).toEqual([]);
});
