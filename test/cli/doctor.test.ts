// dlock doctor against real redis-server processes set up the ways it must judge (docs/guides/cron.md;
// and operations"): each setting is changed on a live server and the verdict follows it. The
// clock offset is injected with libfaketime into dlock (redis-server's jemalloc and libfaketime
// deadlock at start-up: wolfcw/libfaketime#130), which shifts the offset the same way. Through
// the `faketime` wrapper, not LD_PRELOAD alone: without the wrapper's shared semaphore each
// process makes its own in /dev/shm, named by its pid, and one that execs (bin/dlock's shell)
// never removes it; a later `faketime` whose pid matches then fails ("sem_open: File exists").

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock, type StartOptions } from '../helpers/cli.js';
import { ClusterTopology, Replicated, SentinelTopology } from '../helpers/topology.js';
import { freePort, RedisServer } from '../../support/redis-server.mjs';
import { FakeRedis, HANG } from '../helpers/fake-redis.js';

interface DoctorCheck {
  name: string;
  status: 'OK' | 'WARN' | 'FAIL';
  message: string;
  fix: string;
}
interface DoctorReport {
  status: 'OK' | 'WARN' | 'FAIL';
  ttl_ms: number;
  instances: { redis: string; reachable: boolean; checks: DoctorCheck[] }[];
  checks: DoctorCheck[];
}

async function doctorJson(
  args: string[],
  options?: StartOptions,
): Promise<{ code: number | null; report: DoctorReport; stderr: string }> {
  const result = await dlock(['doctor', '--json', ...args], options);
  return { code: result.code, report: JSON.parse(result.stdout) as DoctorReport, stderr: result.stderr };
}

const check = (report: DoctorReport, name: string, instance = 0) =>
  report.instances[instance].checks.find((c) => c.name === name);

let plain: RedisServer;
let durable: RedisServer;
beforeAll(async () => {
  [plain, durable] = await Promise.all([RedisServer.start(), RedisServer.start({ persistence: 'aof-always' })]);
});
afterAll(async () => {
  await Promise.all([plain.close(), durable.close()]);
});

describe('the text report', () => {
  /** doctor's text on a pipe, with COLUMNS as given (unset: undefined). */
  async function text(columns: string | undefined): Promise<string> {
    const env = cleanEnv();
    delete env.COLUMNS;
    const result = await dlock(['doctor', '--redis', plain.url], {
      env: columns === undefined ? env : { ...env, COLUMNS: columns },
    });
    expect(result.stderr).toBe('');
    return result.stdout;
  }
  // Measurements (clock offset, round trip) differ from one run to the next: numbers as #, and
  // the offset's side (a clock a few ms off is ahead of this host's in one run, behind in the next).
  const words = (report: string) =>
    report
      .replace(/\d+(\.\d+)?/g, '#')
      .replace(/\s(ahead\s+of|behind)\s+this\s+host's/g, " ahead-or-behind this host's")
      .split(/\s+/)
      .filter(Boolean);

  test('fits 80 columns on a pipe, COLUMNS when narrower: a long line is wrapped under its message', async () => {
    // No AOF on `plain`: the persistence WARN is the longest line (about 150 columns unwrapped).
    const [narrow, sixty, wide] = [await text(undefined), await text('60'), await text('400')];
    expect(wide).toMatch(/WARN {2}persistence/);
    expect(narrow.split('\n').filter((line) => line.length > 80)).toEqual([]);
    expect(sixty.split('\n').filter((line) => line.length > 60)).toEqual([]);
    expect(words(narrow)).toEqual(words(wide));
    expect(words(sixty)).toEqual(words(wide));
    // A wrapped message goes on under the message column, its fix under it too.
    const column = /^( {2}WARN {2}persistence +)\S/m.exec(narrow)![1]!.length;
    const block = narrow.split(/^ {2}WARN {2}persistence +/m)[1]!.split(/\n(?= {2}[A-Z]{2,4} )/)[0]!;
    for (const line of block.split('\n').slice(1).filter(Boolean)) expect(line).toMatch(new RegExp(`^ {${column}}\\S`));
  });
});

describe('settings', () => {
  test('allkeys-lru is a FAIL (an evicted fence counter goes back), exit 1; noeviction is OK again', async () => {
    await plain.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const { code, report } = await doctorJson(['--redis', plain.url]);
      expect(code).toBe(1);
      expect(report.status).toBe('FAIL');
      expect(check(report, 'maxmemory-policy')).toMatchObject({
        status: 'FAIL',
        message: expect.stringMatching(/^allkeys-lru: .*fence counter/),
        fix: expect.stringContaining('maxmemory-policy noeviction'),
      });
      const text = await dlock(['doctor', '--redis', plain.url]);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(
        /\n {2}FAIL {2}maxmemory-policy {2}allkeys-lru: [^]*?\n {8} +fix: CONFIG SET maxmemory-policy noeviction/,
      );
      expect(text.stdout).toMatch(/\n\n1 FAIL, \d+ WARN, \d+ OK\n$/);
      expect(text.stderr).toBe('');
    } finally {
      await plain.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }
    expect(check((await doctorJson(['--redis', plain.url])).report, 'maxmemory-policy')?.status).toBe('OK');
  });

  test('volatile-lru: OK without a memory limit, WARN with one (a held lock has a TTL)', async () => {
    await plain.command('CONFIG', 'SET', 'maxmemory-policy', 'volatile-lru');
    try {
      expect(check((await doctorJson(['--redis', plain.url])).report, 'maxmemory-policy')?.status).toBe('OK');
      await plain.command('CONFIG', 'SET', 'maxmemory', '1gb');
      expect(check((await doctorJson(['--redis', plain.url])).report, 'maxmemory-policy')).toMatchObject({
        status: 'WARN',
        message: expect.stringContaining('held lock'),
      });
    } finally {
      await plain.command('CONFIG', 'SET', 'maxmemory', '0');
      await plain.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    }
  });

  test('without AOF: WARN persistence, and no FAIL (exit 0)', async () => {
    const { code, report } = await doctorJson(['--redis', plain.url]);
    expect(code).toBe(0);
    expect(report.status).toBe('WARN');
    expect(check(report, 'persistence')).toMatchObject({
      status: 'WARN',
      message: expect.stringMatching(/^no AOF/),
      fix: expect.stringContaining('appendonly yes'),
    });
  });

  test('appendonly yes with appendfsync always and noeviction: every check OK, exit 0; everysec is a WARN', async () => {
    const { code, report } = await doctorJson(['--redis', durable.url]);
    expect(code).toBe(0);
    expect(report.instances[0].checks.filter((c) => c.status !== 'OK')).toEqual([]);
    expect(report.status).toBe('OK');
    expect(report.instances[0].checks.map((c) => c.name)).toEqual([
      'version',
      'maxmemory-policy',
      'persistence',
      'replicas',
      'acl',
      'tls',
      'clock',
      'round trip',
    ]);
    await durable.command('CONFIG', 'SET', 'appendfsync', 'everysec');
    try {
      const everysec = await doctorJson(['--redis', durable.url]);
      expect(everysec.code).toBe(0);
      expect(check(everysec.report, 'persistence')).toMatchObject({
        status: 'WARN',
        message: expect.stringContaining('appendfsync everysec'),
        fix: expect.stringContaining('appendfsync always'),
      });
    } finally {
      await durable.command('CONFIG', 'SET', 'appendfsync', 'always');
    }
  });

  test('--json: one object, every check {name, status, message, fix}; the text says the same', async () => {
    const { report, stderr } = await doctorJson(['--redis', durable.url]);
    expect(stderr).toBe('');
    expect(Object.keys(report).sort()).toEqual(['checks', 'instances', 'status', 'ttl_ms']);
    expect(report.ttl_ms).toBe(30_000);
    expect(report.instances).toEqual([{ redis: durable.url, reachable: true, checks: expect.any(Array) }]);
    for (const c of report.instances[0].checks) {
      expect(Object.keys(c).sort()).toEqual(['fix', 'message', 'name', 'status']);
      expect(['OK', 'WARN', 'FAIL']).toContain(c.status);
    }
    const text = await dlock(['doctor', '--redis', durable.url]);
    for (const c of report.instances[0].checks) expect(text.stdout).toContain(`  ${c.status.padEnd(4)}  ${c.name}`);
  });
});

describe('ACL grants', () => {
  const PASSWORD = 'doctor-pw';
  const url = `redis://dlock:${PASSWORD}@127.0.0.1`;
  const LEAST = [
    '~dlock:*',
    '&dlock:*',
    '+evalsha',
    '+eval',
    '+scan',
    '+subscribe',
    '+hget',
    '+hset',
    '+hgetall',
    '+hexists',
    '+hdel',
    '+exists',
    '+pttl',
    '+pexpire',
    '+incr',
    '+get',
    '+set',
    '+del',
    '+publish',
    '+time',
    '+zadd',
    '+zrem',
    '+zrange',
    '+zrangebyscore',
    '+zscore',
    '+zrank',
    '+zrevrangebyscore',
    '+zcard',
    '+wait',
    '+select',
    '+xadd',
    '+xrevrange',
    '+hincrby',
    '+hmget',
  ];
  const grant = (rules: string[]) => plain.command('ACL', 'SETUSER', 'dlock', 'reset', 'on', `>${PASSWORD}`, ...rules);

  test("README's least-privilege user: every grant there, never FAIL", async () => {
    await grant(LEAST);
    const { code, report } = await doctorJson(['--redis', `${url}:${plain.port}`]);
    expect(code).toBe(0);
    expect(check(report, 'acl')).toMatchObject({ status: 'OK', message: 'user dlock may run everything dlock does' });
    // The line needs +time, so the clock is checked too.
    expect(check(report, 'clock')).toMatchObject({ status: 'OK' });
    expect(JSON.stringify(report)).not.toContain(PASSWORD);
  });

  test('without +evalsha: FAIL naming the feature and the grant to add, exit 1', async () => {
    await grant(LEAST.filter((rule) => rule !== '+evalsha'));
    const { code, report } = await doctorJson(['--redis', `${url}:${plain.port}`]);
    expect(code).toBe(1);
    expect(check(report, 'acl +evalsha')).toEqual({
      name: 'acl +evalsha',
      status: 'FAIL',
      message: expect.stringMatching(/may not run EVALSHA, needed for dlock run/),
      fix: 'ACL SETUSER dlock +evalsha',
    });
    expect(report.instances[0].checks.filter((c) => c.name.startsWith('acl'))).toHaveLength(1);
  });

  test('keys outside the namespace: FAIL with the key pattern to grant', async () => {
    await grant(['~other:*', ...LEAST.filter((rule) => !rule.startsWith('~'))]);
    const { code, report } = await doctorJson(['--redis', `${url}:${plain.port}`]);
    expect(code).toBe(1);
    expect(check(report, 'acl +hget')).toMatchObject({ status: 'FAIL', fix: 'ACL SETUSER dlock +hget ~dlock:*' });
  });

  test('without +publish: WARN (waiters notice by polling), no FAIL; without +set only --once-per misses it (WARN): a FAIL only with Redlock', async () => {
    await grant(LEAST.filter((rule) => rule !== '+publish' && rule !== '+set'));
    const { code, report } = await doctorJson(['--redis', `${url}:${plain.port}`]);
    expect(code).toBe(0);
    expect(check(report, 'acl +publish')).toMatchObject({
      status: 'WARN',
      message: expect.stringContaining('polling'),
      fix: 'ACL SETUSER dlock +publish &dlock:*',
    });
    expect(check(report, 'acl +set')).toMatchObject({ status: 'WARN', message: expect.stringContaining('--once-per') });
  });

  test('without EVAL nothing else can be asked: FAIL +eval', async () => {
    await grant(LEAST.filter((rule) => rule !== '+eval'));
    const { code, report } = await doctorJson(['--redis', `${url}:${plain.port}`]);
    expect(code).toBe(1);
    expect(check(report, 'acl +eval')).toMatchObject({ status: 'FAIL', fix: 'ACL SETUSER dlock +eval' });
  });

  afterAll(async () => {
    await plain.command('ACL', 'DELUSER', 'dlock');
  });
});

describe('clock offset (libfaketime on dlock)', () => {
  // dlock's wall clock shifted; its monotonic clock (timers, round trips) left alone.
  const shifted = (offset: string): StartOptions => ({
    via: ['faketime', '-f', offset],
    env: cleanEnv({ FAKETIME_DONT_FAKE_MONOTONIC: '1' }),
  });

  test('this host 2s behind: WARN with the measured offset', async () => {
    const { code, report } = await doctorJson(['--redis', durable.url], shifted('-2s'));
    expect(code).toBe(0);
    const clock = check(report, 'clock')!;
    expect(clock).toMatchObject({ status: 'WARN', fix: expect.stringContaining('synchronise') });
    const [, seconds] = /clock is ([\d.]+)s ahead of this host's/.exec(clock.message)!;
    expect(Number(seconds)).toBeGreaterThanOrEqual(1.9);
    expect(Number(seconds)).toBeLessThanOrEqual(2.1);
  });

  test('this host 30s behind: FAIL (more than 2/3 of the TTL), exit 1; the limits follow --ttl', async () => {
    const { code, report } = await doctorJson(['--redis', durable.url], shifted('-30s'));
    expect(code).toBe(1);
    expect(check(report, 'clock')).toMatchObject({
      status: 'FAIL',
      message: expect.stringMatching(/clock is (29\.9|30|30\.1)s ahead of this host's .*more than 20s/),
    });
    // With 2-minute leases 30s is only a WARN.
    const long = await doctorJson(['--redis', durable.url, '--ttl', '2m'], shifted('-30s'));
    expect(long.code).toBe(0);
    expect(check(long.report, 'clock')?.status).toBe('WARN');
  });

  test('an unshifted clock is OK', async () => {
    expect(check((await doctorJson(['--redis', durable.url])).report, 'clock')?.status).toBe('OK');
  });
});

describe('topologies and exit codes', () => {
  test('Redlock: every instance checked, and their clocks against each other', async () => {
    const { report } = await doctorJson(['--redis', plain.url, '--redis', durable.url]);
    expect(report.instances.map((i) => i.redis)).toEqual([plain.url, durable.url]);
    expect(report.checks).toEqual([expect.objectContaining({ name: 'clock spread', status: 'OK' })]);
  });

  test('an unreachable instance: FAIL in the report, the others still checked, exit 69 with one error line', async () => {
    const down = `redis://127.0.0.1:${await freePort()}`;
    const result = await dlock(['doctor', '--json', '--redis', down, '--redis', durable.url]);
    expect(result.code).toBe(69);
    expect(result.stderr).toMatch(
      /^dlock: doctor could not check 1 of 2 Redis instances \(redis:\/\/127\.0\.0\.1:\d+: connection refused\)\n$/,
    );
    const report = JSON.parse(result.stdout) as DoctorReport;
    expect(report.instances).toEqual([
      { redis: down, reachable: false, checks: [expect.objectContaining({ name: 'connect', status: 'FAIL' })] },
      expect.objectContaining({ redis: durable.url, reachable: true }),
    ]);
  });

  test('usage errors: 64', async () => {
    for (const args of [['--ttl', '10x'], ['--ttl', '50ms'], ['--nope'], ['extra']]) {
      const result = await dlock(['doctor', '--redis', durable.url, ...args]);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr).toMatch(/^dlock: .*\n$/);
    }
  });

  test('replicas without min-replicas-to-write: WARN with the --sync-replicas hint; min-replicas-to-write 1 is OK', async () => {
    const replicated = await Replicated.start({ replicas: 1 });
    try {
      const url = replicated.primary.url;
      expect(check((await doctorJson(['--redis', url])).report, 'replicas')).toMatchObject({
        status: 'WARN',
        message: expect.stringMatching(/^1 replica\(s\) and min-replicas-to-write 0/),
        fix: expect.stringContaining('--sync-replicas 1'),
      });
      await replicated.primary.command('CONFIG', 'SET', 'min-replicas-to-write', '1');
      expect(check((await doctorJson(['--redis', url])).report, 'replicas')?.status).toBe('OK');
    } finally {
      await replicated.close();
    }
  });

  test('redis+sentinel://: the master the sentinels name is checked, replicas included', async () => {
    const topology = await SentinelTopology.start({ replicas: 1 });
    try {
      const { report } = await doctorJson(['--redis', topology.url()]);
      expect(report.instances).toHaveLength(1);
      expect(report.instances[0].redis).toBe(`${topology.url()} master 127.0.0.1:${topology.data.primary.port}`);
      expect(check(report, 'replicas')?.status).toBe('WARN');
    } finally {
      await topology.close();
    }
  });

  test('redis+cluster://: each master is checked', async () => {
    const cluster = await ClusterTopology.start({ primaries: 3 });
    try {
      const { code, report } = await doctorJson(['--redis', cluster.url()]);
      expect(code).toBe(0);
      expect(report.instances.map((i) => i.redis).sort()).toEqual(
        cluster.primaries.map((p) => `${cluster.url()} node 127.0.0.1:${p.port}`).sort(),
      );
      for (const instance of report.instances) expect(instance.checks.find((c) => c.name === 'acl')?.status).toBe('OK');
    } finally {
      await cluster.close();
    }
  });
});

describe('a server that lies or hangs (fake RESP server)', () => {
  test('one that stops answering after HELLO: FAIL within about one --connect-timeout, never a hang', async () => {
    const fake = await FakeRedis.start((argv) => (argv[0] === 'HELLO' ? undefined : HANG));
    try {
      const started = Date.now();
      const { code, report } = await doctorJson(['--redis', fake.url, '--connect-timeout', '1s']);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(code).toBe(1);
      expect(check(report, 'answers')).toMatchObject({
        status: 'FAIL',
        message: expect.stringContaining('no answer within 1s'),
      });
    } finally {
      await fake.close();
    }
  });

  test('odd answers to TIME, CONFIG and the ACL check: those checks say not checked, text is escaped, no crash', async () => {
    const info = 'redis_version:7.0.0\r\nmaxmemory_policy:\x1b[31mevil\r\naof_enabled:0\r\nconnected_slaves:0\r\n';
    const fake = await FakeRedis.start((argv) =>
      argv[0] === 'HELLO'
        ? undefined
        : argv[0] === 'TIME'
          ? ['soon', 'later']
          : argv[0] === 'INFO'
            ? info
            : argv[0] === 'EVAL'
              ? 'yes'
              : [[]],
    );
    try {
      // Wide: each check on one line, as the patterns read it.
      const result = await dlock(['doctor', '--redis', fake.url], { env: cleanEnv({ COLUMNS: '1000' }) });
      expect(result.stderr).toBe('');
      expect(result.stdout).not.toContain('\x1b');
      expect(result.stdout).toMatch(/WARN {2}maxmemory-policy +unknown policy "\\x1b\[31mevil"/);
      expect(result.stdout).toMatch(/WARN {2}acl +not checked: the ACL grants \(.*the ACL check script answered/);
      expect(result.stdout).toMatch(
        /WARN {2}clock +not checked: the clock offset \(TIME: TIME answered something that is not a time\)/,
      );
      expect(result.code).toBe(0);
    } finally {
      await fake.close();
    }
  });

  test('replica counts that are not numbers: replicas not checked, never "NaN replica(s)"', async () => {
    const info = (replicas: string) => `redis_version:7.0.0\r\nconnected_slaves:${replicas}\r\n`;
    const cases: [string, string, RegExp][] = [
      ['many', '0', /not checked: replicas \(INFO answered connected_slaves "many", not a count\)/],
      ['\x1b[2J', '0', /not checked: replicas \(INFO answered connected_slaves "\\u001b\[2J", not a count\)/],
      ['2', 'some', /not checked: 2 replica\(s\), min-replicas-to-write \(CONFIG GET: it answered "some", not a/],
    ];
    for (const [replicas, minimum, message] of cases) {
      const fake = await FakeRedis.start((argv) => {
        if (argv[0] === 'INFO') return info(replicas);
        if (argv[0] === 'CONFIG') return argv[2] === 'min-replicas-to-write' ? [argv[2], minimum] : [];
        return undefined;
      });
      try {
        const { report } = await doctorJson(['--redis', fake.url]);
        const replicasCheck = check(report, 'replicas');
        expect(replicasCheck).toMatchObject({ status: 'WARN', message: expect.stringMatching(message) });
        expect(JSON.stringify(replicasCheck)).not.toMatch(/NaN/);
      } finally {
        await fake.close();
      }
    }
  });

  test('a malformed reply fails the instance (FAIL answers), not every check one by one', async () => {
    const fake = await FakeRedis.start((argv) =>
      argv[0] === 'HELLO'
        ? undefined
        : argv[0] === 'TIME'
          ? ['soon', '\x1b[2J']
          : argv[0] === 'INFO'
            ? ['not', 'text']
            : argv[0] === 'EVAL'
              ? 'yes'
              : [[[]]],
    );
    try {
      const result = await dlock(['doctor', '--redis', fake.url], { env: cleanEnv({ COLUMNS: '1000' }) });
      expect(result.code, result.stderr).not.toBe(70);
      expect(result.stderr).not.toMatch(/internal error/);
      expect(result.stdout).not.toContain('\x1b');
      // The malformed INFO fails the connection: the instance is reported as failed, not as "not checked" everywhere.
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(
        /FAIL {2}answers +the server stopped answering \(.*INFO was answered with something that is not text\)/,
      );
    } finally {
      await fake.close();
    }
  });
});
