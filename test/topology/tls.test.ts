// rediss:// against redis-server speaking only TLS, with a CA made by openssl for the test.
// Verification is always on: an unknown CA or a wrong host name is 69, never a fallback.

import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock, start } from '../helpers/cli.js';
import { ConnectionRecorder, expectOneError } from '../helpers/hostile.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { makePki, TlsRedis, type Pki } from '../helpers/tls.js';

let pki: Pki;
let tls: TlsRedis;
let wrongHost: TlsRedis;
let mutual: TlsRedis;
let plain: RedisServer;
let recorder: ConnectionRecorder;

beforeAll(async () => {
  pki = makePki();
  [tls, wrongHost, mutual, plain, recorder] = await Promise.all([
    TlsRedis.start(pki, { cert: pki.serverCert, key: pki.serverKey }),
    TlsRedis.start(pki, { cert: pki.wrongHostCert, key: pki.wrongHostKey }),
    TlsRedis.start(pki, { cert: pki.serverCert, key: pki.serverKey, clientAuth: true }),
    RedisServer.start(),
    ConnectionRecorder.start(),
  ]);
});

afterAll(async () => {
  await Promise.all([tls?.close(), wrongHost?.close(), mutual?.close(), plain?.close(), recorder?.close()]);
  pki?.remove();
});

const FENCE = ['sh', '-c', 'echo "fence=$DLOCK_FENCING_TOKEN"'];

describe('rediss:// with a CA given', () => {
  test('run takes the lock over TLS and status reads it', async () => {
    const result = await dlock(['run', '--redis', tls.url, '--tls-ca', pki.ca, 'tls-run', '--', ...FENCE]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('fence=1\n');
    expect(await tls.client().get('dlock:{tls-run}:fence')).toBe('1');

    const holder = start(['run', '--redis', tls.url, '--tls-ca', pki.ca, '-v', 'tls-held', '--', 'sleep', '30']);
    await holder.waitFor('acquired tls-held');
    const status = await dlock(['status', '--json', '--redis', tls.url, 'tls-held'], {
      env: cleanEnv({ DLOCK_TLS_CA: pki.ca }),
    });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ key: 'tls-held', held: true, holder: { cmd: 'sleep 30' } });
    holder.process.kill('SIGTERM');
    await holder.result;
  });

  test('a waiter is woken through pub/sub over TLS', async () => {
    const args = ['--redis', tls.url, '--tls-ca', pki.ca, '--log-format', 'json'];
    const holder = start(['run', ...args, 'tls-wait', '--', 'sleep', '30']);
    await holder.waitFor('"acquired"');
    const waiter = start(['run', ...args, '--wait', '20s', 'tls-wait', '--', ...FENCE]);
    await waiter.waitFor('"waiting"');
    holder.process.kill('SIGTERM');
    const result = await waiter.result;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('fence=2\n');
    const released = JSON.parse(result.stderr.split('\n').find((line) => line.includes('"acquired"'))!);
    // Woken by the release message, not by a poll after the holder's 30s TTL.
    expect(released.waited_ms).toBeLessThan(5_000);
  });

  test('a client certificate from --tls-cert/--tls-key or DLOCK_TLS_CERT/DLOCK_TLS_KEY', async () => {
    const flags = await dlock([
      'run',
      '--redis',
      mutual.url,
      '--tls-ca',
      pki.ca,
      '--tls-cert',
      pki.clientCert,
      '--tls-key',
      pki.clientKey,
      'mtls',
      '--',
      ...FENCE,
    ]);
    expect(flags.stderr).toBe('');
    expect(flags.stdout).toBe('fence=1\n');
    const env = cleanEnv({ DLOCK_TLS_CA: pki.ca, DLOCK_TLS_CERT: pki.clientCert, DLOCK_TLS_KEY: pki.clientKey });
    const fromEnv = await dlock(['run', '--redis', mutual.url, 'mtls', '--', ...FENCE], { env });
    expect(fromEnv.stderr).toBe('');
    expect(fromEnv.stdout).toBe('fence=2\n');
  });

  test("the child gets no TLS key material: its environment is the caller's plus DLOCK_KEY/FENCING_TOKEN/TOKEN/TTL_MS", async () => {
    const caller = cleanEnv({ DLOCK_TLS_KEY: pki.clientKey });
    const print = [process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'];
    const result = await dlock(
      ['run', '--redis', mutual.url, '--tls-ca', pki.ca, '--tls-cert', pki.clientCert, 'mtls-env', '--', ...print],
      { env: caller },
    );
    expect(result.code, result.stderr).toBe(0);
    const child = JSON.parse(result.stdout) as Record<string, string>;
    expect(
      Object.keys(child)
        .filter((name) => !(name in caller))
        .sort(),
    ).toEqual(['DLOCK_FENCING_TOKEN', 'DLOCK_KEY', 'DLOCK_TOKEN', 'DLOCK_TTL_MS']);
    for (const [name, value] of Object.entries(caller)) expect(child[name], name).toBe(value);
    expect(result.stdout).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE/);
  });
});

describe('certificate errors are 69 with a clear message', () => {
  test('no CA given: the system trust store does not know the test CA', async () => {
    expectOneError(
      await dlock(['run', '--redis', tls.url, 'k', '--', 'true']),
      69,
      /cannot reach rediss:\/\/127\.0\.0\.1:\d+: TLS certificate not trusted \(unknown CA/,
    );
  });

  test('NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn verification off', async () => {
    const result = await dlock(['status', '--redis', tls.url, 'k'], {
      env: cleanEnv({ NODE_TLS_REJECT_UNAUTHORIZED: '0' }),
    });
    // Node itself may warn about the variable; dlock's own output is still its one line.
    const ours = result.stderr.split('\n').filter((line) => line.startsWith('dlock: '));
    expect(result.code).toBe(69);
    expect(ours).toEqual([expect.stringMatching(/TLS certificate not trusted/)]);
    expect(result.stdout).toBe('');
  });

  test('a CA that did not sign the server certificate', async () => {
    expectOneError(
      await dlock(['status', '--redis', tls.url, '--tls-ca', pki.otherCa, 'k']),
      69,
      /TLS certificate not trusted/,
    );
  });

  test('a certificate for another host name', async () => {
    expectOneError(
      await dlock(['run', '--redis', wrongHost.url, '--tls-ca', pki.ca, 'k', '--', 'true']),
      69,
      /TLS certificate does not match the host name/,
    );
  });

  test('a server that requires a client certificate, none given', async () => {
    expectOneError(
      await dlock(['run', '--redis', mutual.url, '--tls-ca', pki.ca, 'k', '--', 'true']),
      69,
      /cannot reach rediss:\/\/127\.0\.0\.1:\d+: the server requires a client certificate/,
    );
  });

  test('no silent fallback: redis:// to a TLS port and rediss:// to a plain port both fail', async () => {
    expectOneError(
      await dlock(['run', '--redis', `redis://127.0.0.1:${tls.port}`, '--connect-timeout', '2s', 'k', '--', 'true']),
      69,
      /^dlock: redis:\/\/127\.0\.0\.1:\d+: a TLS port: use rediss:\/\//,
    );
    const tlsToPlain = [
      'run',
      '--redis',
      `rediss://127.0.0.1:${plain.port}`,
      '--tls-ca',
      pki.ca,
      '--connect-timeout',
      '1s',
      'k',
      '--',
      'true',
    ];
    expectOneError(await dlock(tlsToPlain), 69, /timed out after 1000ms in the TLS handshake/);
    expect(await plain.client().exists('dlock:{k}')).toBe(0);
  });
});

describe('TLS options are checked before anything connects (64)', () => {
  const tlsUrl = () => `rediss://127.0.0.1:${recorder.port}`;

  test('--tls-* with a redis:// URL is a usage error, not an implicit upgrade or a no-op', async () => {
    expectOneError(
      await dlock(['run', '--redis', recorder.url, '--tls-ca', pki.ca, 'k', '--', 'true']),
      64,
      /^dlock: --tls-ca: TLS options need rediss:\/\/ URLs/,
    );
    expectOneError(
      await dlock(['status', 'k'], {
        env: cleanEnv({ DLOCK_REDIS_URL: `${tlsUrl()},${recorder.url}`, DLOCK_TLS_CA: pki.ca }),
      }),
      64,
      /^dlock: DLOCK_TLS_CA: TLS options need rediss:\/\/ URLs/,
    );
    expect(recorder.connections).toBe(0);
  });

  test('unreadable, missing or wrong files name the option', async () => {
    const dir = join(pki.dir, 'bad');
    mkdirSync(dir, { recursive: true });
    const notPem = join(dir, 'not.pem');
    writeFileSync(notPem, 'hello\n');
    const unreadable = join(dir, 'unreadable.pem');
    writeFileSync(unreadable, '');
    chmodSync(unreadable, 0);
    const cases: [string[], RegExp][] = [
      [['--tls-ca', join(dir, 'missing.pem')], /^dlock: --tls-ca: no such file/],
      [['--tls-ca', dir], /^dlock: --tls-ca: is a directory/],
      [['--tls-ca', notPem], /^dlock: --tls-ca: not a PEM certificate/],
      [
        ['--tls-ca', pki.ca, '--tls-cert', pki.clientCert],
        /^dlock: --tls-cert: a client certificate needs its key too/,
      ],
      [['--tls-key', pki.clientKey], /^dlock: --tls-key: a client key needs its certificate too/],
      [['--tls-cert', pki.clientCert, '--tls-key', pki.serverKey], /^dlock: --tls-key: does not match the certificate/],
      [['--tls-cert', notPem, '--tls-key', pki.clientKey], /^dlock: --tls-cert: not a PEM certificate/],
      [['--tls-cert', pki.clientCert, '--tls-key', notPem], /^dlock: --tls-key: not a PEM private key/],
    ];
    // root reads files whatever their mode; the case only means something for other users.
    if (process.getuid?.() !== 0) cases.push([['--tls-ca', unreadable], /^dlock: --tls-ca: permission denied/]);
    for (const [flags, message] of cases) {
      expectOneError(await dlock(['run', '--redis', tlsUrl(), ...flags, 'k', '--', 'true']), 64, message);
    }
    expectOneError(
      await dlock(['status', '--redis', tlsUrl(), 'k'], { env: cleanEnv({ DLOCK_TLS_CA: notPem }) }),
      64,
      /^dlock: DLOCK_TLS_CA: not a PEM certificate/,
    );
    expect(recorder.connections).toBe(0);
  });
});
