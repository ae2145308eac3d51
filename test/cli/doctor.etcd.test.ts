// dlock doctor on etcd against real etcd members set up the ways it must judge
// (docs/operations/etcd.md, "dlock doctor on etcd"): a healthy member, one that cannot be
// reached, a NOSPACE alarm raised by writing past a tiny quota, authentication with a wrong
// password, and two endpoints that are two clusters.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dlock } from '../helpers/cli.js';
import { EtcdServer } from '../../support/etcd-server.mjs';
import { freePort } from '../../support/redis-server.mjs';

interface DoctorCheck {
  name: string;
  status: 'OK' | 'WARN' | 'FAIL';
  message: string;
  fix: string;
}
interface DoctorReport {
  status: 'OK' | 'WARN' | 'FAIL';
  instances: { etcd: string; reachable: boolean; checks: DoctorCheck[] }[];
  checks: DoctorCheck[];
}

async function doctorJson(args: string[]): Promise<{ code: number | null; report: DoctorReport; stderr: string }> {
  const result = await dlock(['doctor', '--json', '--connect-timeout', '2s', ...args]);
  return { code: result.code, report: JSON.parse(result.stdout) as DoctorReport, stderr: result.stderr };
}

const check = (report: DoctorReport, name: string, instance = 0) =>
  report.instances[instance]!.checks.find((c) => c.name === name);

let healthy: EtcdServer;
let other: EtcdServer;
beforeAll(async () => {
  [healthy, other] = await Promise.all([EtcdServer.start(), EtcdServer.start()]);
});
afterAll(async () => {
  await Promise.all([healthy.close(), other.close()]);
});

describe('a healthy member', () => {
  test('every check is OK, in text and in --json, exit 0', async () => {
    const { code, report, stderr } = await doctorJson(['--redis', healthy.url]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(report.status).toBe('OK');
    expect(report.instances[0]!.etcd).toBe(healthy.url);
    expect(report.instances[0]!.checks.map((c) => [c.name, c.status])).toEqual([
      ['version', 'OK'],
      ['leader', 'OK'],
      ['alarms', 'OK'],
      ['auth', 'OK'],
      ['permission', 'OK'],
      ['lease minimum', 'OK'],
    ]);
    expect(check(report, 'version')!.message).toMatch(/^etcd 3\.\d+\.\d+$/);
    expect(check(report, 'leader')!.message).toMatch(/^this member leads \([0-9a-f]+\)$/);
    const text = await dlock(['doctor', '--redis', healthy.url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^etcd:\/\/127\.0\.0\.1:\d+\n {2}OK {4}version/);
    expect(text.stdout).toMatch(/\n0 FAIL, 0 WARN, 6 OK\n$/);
  });

  test('a --ttl under the lease minimum is a WARN naming the lease it runs as', async () => {
    const { code, report } = await doctorJson(['--redis', healthy.url, '--ttl', '500ms']);
    expect(code).toBe(0);
    expect(check(report, 'lease minimum')).toMatchObject({
      status: 'WARN',
      message: expect.stringMatching(/^--ttl 500ms runs as a 2s lease on this cluster/),
    });
  });

  test("--prefix '' (to meet etcdctl lock NAME): the permission over every key is checked", async () => {
    const { code, report } = await doctorJson(['--redis', healthy.url, '--prefix', '']);
    expect(code).toBe(0);
    expect(check(report, 'permission')).toMatchObject({
      status: 'OK',
      message: 'dlock may write, read and delete keys under every key (--prefix is empty)',
    });
  });

  test('the probe leaves no key and no lease behind', async () => {
    await doctorJson(['--redis', healthy.url]);
    const keys = await healthy.request('/v3/kv/range', { key: 'AA==', range_end: 'AA==' });
    expect(keys.kvs ?? []).toEqual([]);
    const leases = await healthy.request('/v3/lease/leases', {});
    expect(leases.leases ?? []).toEqual([]);
  });
});

test('an endpoint nothing listens on: its connect FAILs, the others are checked, exit 69', async () => {
  const port = await freePort();
  const result = await dlock(['doctor', '--connect-timeout', '1s', '--redis', `${healthy.url},127.0.0.1:${port}`]);
  expect(result.code).toBe(69);
  expect(result.stdout).toContain(`etcd://127.0.0.1:${port}\n  FAIL  connect`);
  expect(result.stdout).toContain('cannot reach it: connection refused');
  expect(result.stdout).toMatch(/OK {4}lease minimum/);
  const lines = result.stderr.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^dlock: doctor could not check .*127\.0\.0\.1:\d+: connection refused/);
});

test('a NOSPACE alarm FAILs with the fix', async () => {
  const full = await EtcdServer.start({ args: ['--quota-backend-bytes', '16384'] });
  try {
    // Write until etcd refuses: the refusal raises the alarm.
    const value = Buffer.alloc(4096, 'x').toString('base64');
    for (let i = 0; i < 200; i++) {
      const refused = await full
        .request('/v3/kv/put', { key: Buffer.from(`fill${i}`).toString('base64'), value })
        .then(() => false)
        .catch(() => true);
      if (refused) break;
    }
    const alarms = await full.etcdctl('alarm', 'list');
    expect(alarms.stdout).toContain('NOSPACE');
    const { code, report } = await doctorJson(['--redis', full.url]);
    expect(code).toBe(1);
    expect(check(report, 'alarms')).toMatchObject({
      status: 'FAIL',
      message: expect.stringMatching(/^NOSPACE \(member [0-9a-f]+\): the database is over its quota/),
      fix: 'etcdctl defrag, raise --quota-backend-bytes, then etcdctl alarm disarm',
    });
  } finally {
    await full.close();
  }
});

test('authentication on and a wrong password: auth FAILs, exit 1; the right one passes', async () => {
  const secured = await EtcdServer.start();
  try {
    for (const args of [
      ['user', 'add', 'root:rootpw'],
      ['user', 'add', 'alice:alicepw'],
      ['role', 'add', 'lockers'],
      ['role', 'grant-permission', 'lockers', '--prefix=true', 'readwrite', 'dlock:'],
      ['user', 'grant-role', 'alice', 'lockers'],
      ['auth', 'enable'],
    ])
      expect((await secured.etcdctl(...args)).code).toBe(0);
    const wrong = await doctorJson(['--redis', `etcd://alice:nope@${secured.endpoint}`]);
    expect(wrong.code).toBe(1);
    expect(check(wrong.report, 'auth')).toMatchObject({
      status: 'FAIL',
      message: 'etcd refused user alice: authentication failed, invalid user ID or password',
    });
    expect(JSON.stringify(wrong.report)).not.toContain('nope');
    const right = await doctorJson(['--redis', `etcd://alice:alicepw@${secured.endpoint}`]);
    expect(right.code).toBe(0);
    expect(check(right.report, 'auth')!.message).toBe('user alice authenticates');
    const elsewhere = await doctorJson(['--redis', `etcd://alice:alicepw@${secured.endpoint}`, '--prefix', 'jobs:']);
    expect(check(elsewhere.report, 'permission')).toMatchObject({
      status: 'FAIL',
      message: expect.stringMatching(/^permission denied: grant readwrite on the prefix/),
    });
  } finally {
    await secured.close();
  }
});

test('a password where etcd has no authentication: a WARN that it is unused', async () => {
  const { code, report } = await doctorJson(['--redis', `etcd://alice:pw@${healthy.endpoint}`]);
  expect(code).toBe(0);
  expect(check(report, 'auth')).toMatchObject({
    status: 'WARN',
    message: expect.stringMatching(/^etcd's authentication is not enabled: the password of user alice is unused/),
  });
});

test('two endpoints of two single-member clusters: "not one cluster" FAILs', async () => {
  const { code, report } = await doctorJson(['--redis', `${healthy.url},${other.endpoint}`]);
  expect(code).toBe(1);
  expect(report.checks).toHaveLength(1);
  expect(report.checks[0]).toMatchObject({
    name: 'cluster',
    status: 'FAIL',
    message: expect.stringMatching(/^the endpoints are not one cluster: /),
  });
  const text = await dlock(['doctor', '--redis', `${healthy.url},${other.endpoint}`]);
  expect(text.stdout).toContain('\n\nbetween the endpoints\n  FAIL  cluster');
});
