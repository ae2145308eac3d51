// etcd's auth (a user and password in the URL or DLOCK_ETCD_PASSWORD, the token fetched again when
// etcd says it expired) and etcds:// (TLS with --tls-ca/--tls-cert/--tls-key), against real members.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock, start } from '../helpers/cli.js';
import { expectOneError } from '../helpers/hostile.js';
import { makePki, type Pki } from '../helpers/tls.js';
import { EtcdServer, killAllEtcd } from '../../support/etcd-server.mjs';

let auth: EtcdServer;
let pki: Pki;
let tls: EtcdServer;

beforeAll(async () => {
  pki = makePki();
  auth = await EtcdServer.start({ args: ['--auth-token-ttl', '1'] });
  for (const args of [
    ['user', 'add', 'root:rootpw'],
    ['user', 'add', 'alice:alicepw'],
    ['user', 'add', 'mallory:mallorypw'],
    ['role', 'add', 'lockers'],
    ['role', 'grant-permission', 'lockers', '--prefix=true', 'readwrite', 'dlock:'],
    ['user', 'grant-role', 'alice', 'lockers'],
    ['auth', 'enable'],
  ]) {
    const result = await auth.etcdctl(...args);
    expect(result.code, result.stderr).toBe(0);
  }
  tls = await EtcdServer.start({ tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca } });
});

afterAll(async () => {
  await Promise.all([auth?.close(), tls?.close()]);
  killAllEtcd();
  pki?.remove();
});

const FENCE = ['sh', '-c', 'echo "fence=$DLOCK_FENCING_TOKEN"'];

describe("etcd's auth", () => {
  test('a user and password in the URL, or the password in DLOCK_ETCD_PASSWORD', async () => {
    const inUrl = await dlock(['run', '--redis', `etcd://alice:alicepw@${auth.endpoint}`, 'auth-url', '--', ...FENCE]);
    expect(inUrl.stderr).toBe('');
    expect(inUrl.stdout).toMatch(/^fence=\d+\n$/);
    const fromEnv = await dlock(['run', '--redis', `etcd://alice@${auth.endpoint}`, 'auth-env', '--', ...FENCE], {
      env: cleanEnv({ DLOCK_ETCD_PASSWORD: 'alicepw' }),
    });
    expect(fromEnv.stderr).toBe('');
    expect(fromEnv.code).toBe(0);
  });

  test('a wrong password, no user, or no permission on the prefix: 69 in one line, the command never runs, no password shown', async () => {
    const wrong = await dlock([
      'run',
      '--redis',
      `etcd://alice:s3cretWRONG@${auth.endpoint}`,
      'auth-bad',
      '--',
      'echo',
      'RAN',
    ]);
    expectOneError(wrong, 69, /authentication failed/);
    expect(wrong.stderr).not.toContain('s3cretWRONG');
    expect(wrong.stdout).toBe('');
    expectOneError(
      await dlock(['run', '--redis', auth.url, 'auth-none', '--', 'echo', 'RAN']),
      69,
      /user name is empty/,
    );
    const denied = await dlock([
      'run',
      '--redis',
      `etcd://mallory:mallorypw@${auth.endpoint}`,
      'auth-denied',
      '--',
      'echo',
      'RAN',
    ]);
    expectOneError(denied, 69, /permission denied/);
    expect(denied.stdout).toBe('');
  });

  test('a waiter whose token expired while it waited (--auth-token-ttl 1) authenticates again and takes the lock', async () => {
    const url = `etcd://alice:alicepw@${auth.endpoint}`;
    const holder = start(['run', '--redis', url, '--log-format', 'json', 'auth-expiry', '--', 'sleep', '3']);
    await holder.waitFor('"acquired"');
    const waiter = await dlock(['run', '--redis', url, '--log-format', 'json', 'auth-expiry', '--', ...FENCE]);
    expect(waiter.code, waiter.stderr).toBe(0);
    expect(waiter.stdout).toMatch(/^fence=\d+\n$/);
    expect((await holder.result).code).toBe(0);
  });
});

describe('etcds://', () => {
  test('run takes the lock over TLS with --tls-ca, and status reads it', async () => {
    const url = `etcds://${tls.endpoint}`;
    const result = await dlock(['run', '--redis', url, '--tls-ca', pki.ca, 'tls-run', '--', ...FENCE]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^fence=\d+\n$/);
    const holder = start(['run', '--redis', url, '--tls-ca', pki.ca, '-v', 'tls-held', '--', 'sleep', '30']);
    await holder.waitFor('acquired tls-held');
    const status = await dlock(['status', '--json', '--redis', url, 'tls-held'], {
      env: cleanEnv({ DLOCK_TLS_CA: pki.ca }),
    });
    expect(JSON.parse(status.stdout)).toMatchObject({ key: 'tls-held', held: true, holder: { cmd: 'sleep 30' } });
    holder.process.kill('SIGTERM');
    await holder.result;
  });

  test('verification is always on: an unknown CA, or etcd:// against a TLS member, is 69', async () => {
    const unknown = await dlock([
      'run',
      '--redis',
      `etcds://${tls.endpoint}`,
      '--tls-ca',
      pki.otherCa,
      'tls-bad',
      '--',
      'echo',
      'RAN',
    ]);
    expectOneError(unknown, 69);
    expect(unknown.stdout).toBe('');
    const plain = await dlock([
      'run',
      '--redis',
      `etcd://${tls.endpoint}`,
      '--connect-timeout',
      '2s',
      'tls-plain',
      '--',
      'echo',
      'RAN',
    ]);
    expectOneError(plain, 69);
    expect(plain.stdout).toBe('');
  });
});
