// The etcd backend's pure parts, as tables: its URLs (exit 64 for every bad one), how lock names map
// onto etcdctl lock's keys, the gateway's encodings, and details read back from forged values.

import { describe, expect, test } from 'vitest';
import { connectionConfig, type Env, type RawOptions } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';
import type { EtcdConnection } from '../../src/backends/etcd/connection.js';
import { b64, int64, kvsOf, prefixEnd } from '../../src/backends/etcd/codec.js';
import {
  escapeName,
  holdKey,
  leaseOfOwner,
  lockPrefix,
  newLeaseOwner,
  ownerOfLease,
  parseHoldKey,
} from '../../src/backends/etcd/keys.js';
import { holderOf, waiterOf } from '../../src/backends/etcd/holders.js';
import { ttlSeconds } from '../../src/backends/etcd/lease.js';

const etcd = (raw: RawOptions, env: Env = {}) =>
  connectionConfig(raw, env) as ReturnType<typeof connectionConfig> & EtcdConnection;
const usage = (raw: RawOptions, env: Env = {}) => {
  try {
    connectionConfig(raw, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no usage error');
};

describe('etcd URLs', () => {
  test('etcd:// and etcds:// pick the etcd backend: one cluster, whatever the number of endpoints', () => {
    const one = etcd({ redis: ['etcd://127.0.0.1:2379'] });
    expect(one.store).toBe('etcd');
    expect(one.endpoints).toEqual([{ host: '127.0.0.1', port: 2379, label: 'etcd://127.0.0.1:2379' }]);
    expect(one.caps).toMatchObject({ store: 'etcd', total: 1, quorum: 1, line: true, kinds: ['exclusive'] });
    const three = etcd({ redis: ['etcd://a:1,b:2,[::1]'] });
    expect(three.endpoints.map(({ label }) => label)).toEqual(['etcd://a:1', 'etcd://b:2', 'etcd://[::1]:2379']);
    expect(three.caps.total).toBe(1);
    const repeated = etcd({ redis: ['etcd://a:1', 'etcd://b:2'] });
    expect(repeated.endpoints).toHaveLength(2);
    expect(etcd({}, { DLOCK_REDIS_URL: 'etcd://a:1,b:2' }).endpoints).toHaveLength(2);
    expect(etcd({ redis: ['ETCDS://h'] }).tls).toBe(true);
  });

  test('the user and password from the URL or DLOCK_ETCD_PASSWORD, masked in secrets', () => {
    const withUrl = etcd({ redis: ['etcd://alice:p%40ss@h:1'] });
    expect([withUrl.user, withUrl.password, withUrl.secrets]).toEqual(['alice', 'p@ss', ['p@ss']]);
    const fromEnv = etcd({ redis: ['etcd://alice@h:1'] }, { DLOCK_ETCD_PASSWORD: 'pw' });
    expect([fromEnv.user, fromEnv.password]).toEqual(['alice', 'pw']);
  });

  test.each([
    [['etcd://h:0'], 'the port must be from 1 to 65535'],
    [['etcd://h:1/path'], 'an etcd URL has no path'],
    [['etcd://h:1?x=1'], 'query strings and fragments are not supported'],
    [['etcd://a:1,,b:2'], 'the host list has an empty entry'],
    [['etcd://:pw@h'], 'the user name is empty'],
    [['etcd://h', 'etcds://i'], 'etcd:// and etcds:// endpoints of one cluster: choose one'],
    [['etcd://h', 'redis://i'], 'name two stores (etcd, redis)'],
    [['redis://i', 'etcd://h'], 'name two stores (redis, etcd)'],
    [['etcd://u:secret@h', 'redis://i'], 'etcd://u:***@h'],
  ])('%j is refused: %s', (urls, why) => {
    const message = usage({ redis: urls });
    expect(message).toContain(why);
    expect(message).not.toContain('secret');
  });

  test('TLS files need etcds://; a password needs a user', () => {
    expect(usage({ redis: ['etcd://h'], tlsCa: '/nonexistent' })).toContain('TLS options need etcds:// URLs');
    expect(usage({ redis: ['etcd://h'] }, { DLOCK_ETCD_PASSWORD: 'pw' })).toContain('a password needs a user name');
  });
});

describe("names onto etcdctl lock's keys", () => {
  test('<prefix><name>/<lease hex>, with / and % escaped so that no two names share a prefix', () => {
    expect(lockPrefix('dlock:', 'job')).toBe('dlock:job/');
    expect(holdKey('', 'job', '4e0540acefd52a06')).toBe('job/4e0540acefd52a06');
    expect(escapeName('a/b%c')).toBe('a%2Fb%25c');
    const names = ['a', 'a/b', 'a%2Fb', 'ab', 'a/'];
    for (const one of names)
      for (const other of names)
        if (one !== other) expect(lockPrefix('p:', other).startsWith(lockPrefix('p:', one))).toBe(false);
  });

  test('a key read back: the lock it blocks is the name before the first /, the owner its lease when it names one', () => {
    expect(parseHoldKey('p:', 'p:a%2Fb%25/4e0540acefd52a06')).toEqual({
      name: 'a/b%',
      owner: '00000000000000004e0540acefd52a06',
    });
    // etcdctl lock p:x/y lies under p:x/ and blocks the dlock name x: listed there, with no dlock owner.
    expect(parseHoldKey('p:', 'p:x/y/4e05')).toEqual({ name: 'x', owner: '' });
    expect(parseHoldKey('p:', 'p:job/NOTHEX')).toEqual({ name: 'job', owner: '' });
    expect(parseHoldKey('p:', 'p:job')).toBeUndefined();
    expect(parseHoldKey('p:', 'q:job/4e05')).toBeUndefined();
  });

  test('the owner token is 32 hex digits naming the lease: 16 zeros, then the lease id', () => {
    const owner = newLeaseOwner();
    expect(owner).toMatch(/^0{16}[4-7][0-9a-f]{15}$/);
    const lease = leaseOfOwner(owner)!;
    expect(BigInt(lease) >= 2n ** 62n && BigInt(lease) < 2n ** 63n).toBe(true);
    expect(ownerOfLease(BigInt(lease).toString(16))).toBe(owner);
    expect(leaseOfOwner('0123456789abcdef0123456789abcdef')).toBeUndefined();
    expect(leaseOfOwner('0000000000000000ffffffffffffffff')).toBeUndefined();
    expect(leaseOfOwner('00000000000000000000000000000000')).toBeUndefined();
  });

  test('a lease is asked in whole seconds', () => {
    expect([ttlSeconds(1), ttlSeconds(500), ttlSeconds(1000), ttlSeconds(1001), ttlSeconds(30_000)]).toEqual([
      1, 1, 1, 2, 30,
    ]);
  });
});

describe("the gateway's encodings, read defensively", () => {
  test('prefixEnd: the last byte plus one, carrying past 0xff', () => {
    expect(Buffer.from(prefixEnd('a/'), 'base64').toString()).toBe('a0');
    expect(Buffer.from(prefixEnd('a\u00ff'), 'base64')).toEqual(Buffer.from([0x61, 0xc3, 0xc0]));
  });

  test.each([
    ['42', '42'],
    [42, '42'],
    ['4611686018427387904', '4611686018427387904'],
    ['0', undefined],
    [0, undefined],
    ['9223372036854775808', undefined],
    ['1e3', undefined],
    [1e300, undefined],
    [{}, undefined],
    ['', undefined],
  ])('int64(%j) = %j', (value, expected) => expect(int64(value)).toBe(expected));

  test('kvs of a reply: entries that are not key-values are skipped, values default to empty', () => {
    const reply = {
      kvs: [
        { key: b64('k/1'), create_revision: '5', mod_revision: '6', lease: '7' },
        { key: 'not base64!', create_revision: '5' },
        { key: b64('k/2') },
        'junk',
      ],
    };
    expect(kvsOf(reply)).toEqual([
      { key: 'k/1', createRevision: '5', modRevision: '6', lease: '7', value: Buffer.alloc(0) },
    ]);
    expect(kvsOf({ kvs: 'no' })).toEqual([]);
  });

  test("a holder's details: dlock's JSON, etcdctl's empty value, and forged ones", () => {
    const kv = (value: unknown) => ({
      key: 'k/1',
      createRevision: '9',
      modRevision: '9',
      value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    });
    expect(holderOf(kv({ host: 'h', pid: 7, cmd: 'x', since_ms: 5, ttl_ms: 2000 }), 'o')).toMatchObject({
      owner: 'o',
      fence: '9',
      host: 'h',
      pid: '7',
      cmd: 'x',
      sinceMs: 5,
      ttlMs: 2000,
      forcedMs: 0,
    });
    expect(holderOf(kv(''), 'o')).toMatchObject({ host: '', pid: '', cmd: '', forcedMs: 0 });
    const forged = holderOf(
      kv({ host: 'x'.repeat(100_000), pid: { a: 1 }, since_ms: 'soon', ttl_ms: -5, forced_ms: 'x' }),
      'o',
    );
    expect(forged.host.length).toBeLessThan(300);
    expect([forged.pid, forged.sinceMs, forged.ttlMs, forged.forcedMs]).toEqual(['', undefined, undefined, 0]);
    expect(holderOf(kv('{not json'), 'o').host).toBe('');
    expect(holderOf(kv({ forced_ms: 5 }), 'o')).toMatchObject({ owner: '', forcedMs: 5 });
    expect(waiterOf(kv({ since_ms: 1000 }), 4000)).toMatchObject({ sinceMs: 1000, waitedMs: 3000 });
  });
});
