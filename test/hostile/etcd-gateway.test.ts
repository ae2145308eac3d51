// A lying or broken etcd gateway never crashes, hangs or misleads dlock: each lie, served by the
// fake gateway (test/helpers/fake-etcd.ts) to dlock spawned as a user runs it, ends in one
// "dlock: " line and the documented exit code (69 a bad or unreachable server, 75 busy, 76 lost)
// within its bound, and the command never runs without the lock. Forged holder details and key
// names are shown escaped, or as unknown, in text and in --json.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { dlock, type Result, type StartOptions } from '../helpers/cli.js';
import { ENDLESS, FakeEtcd, HANG, b64, header, huge, raw, type Script } from '../helpers/fake-etcd.js';
import { expectOneError } from '../helpers/hostile.js';
import { removeTempDirs, tempDir } from '../fixtures/observe.js';

const CONNECT_TIMEOUT_MS = 1000;
/** Start-up of dlock on a loaded 2-core machine, on top of the bound under test. */
const SLACK_MS = 2500;

afterAll(() => removeTempDirs());

/** Run dlock against a fake gateway: its result, how long it took, and the fake (closed by then). */
async function against(
  script: Script,
  args: string[],
  options: StartOptions = {},
): Promise<{ result: Result; ms: number; fake: FakeEtcd; afterFirstMs: number }> {
  const fake = await FakeEtcd.start(script);
  try {
    const started = Date.now();
    const result = await dlock(
      [args[0]!, '--redis', fake.url, '--connect-timeout', `${CONNECT_TIMEOUT_MS}ms`, ...args.slice(1)],
      options,
    );
    const ended = Date.now();
    const ms = ended - started;
    // From the first request on: dlock's own bound, without its start-up on a loaded machine.
    const afterFirstMs = ended - (fake.requests[0]?.at ?? started);
    expect(result.signal, result.stderr).toBeNull();
    expect(result.stderr).not.toMatch(/RangeError|TypeError|Maximum call stack|node:internal|\n\s+at /);
    return { result, ms, fake, afterFirstMs };
  } finally {
    await fake.close();
  }
}

/** `dlock run … k -- touch <marker>`: the marker says whether the command ran. */
function marked(): { marker: string; command: string[] } {
  const marker = join(tempDir(), 'ran');
  return { marker, command: ['touch', marker] };
}

/** Only for this path, answer `answer`; the rest honestly. */
const on =
  (path: string, answer: ReturnType<Script>): Script =>
  (request) =>
    request.path === path ? answer : undefined;

/** The txn that joins the line (a put under a CREATE compare), not a release's. */
const isJoin = (body: Record<string, any> | undefined) =>
  body?.compare?.[0]?.target === 'CREATE' && body?.success?.[0]?.request_put !== undefined;

describe('lies that refuse the lock: 69, and the command never runs', () => {
  const cases: [string, Script][] = [
    [
      'a grant of a shorter TTL than asked',
      (request) =>
        request.path === '/v3/lease/grant' ? { header: header(), ID: request.body?.ID, TTL: '1' } : undefined,
    ],
    [
      'a grant of another lease id',
      (request) =>
        request.path === '/v3/lease/grant' ? { header: header(), ID: '4611686018427387905', TTL: '30' } : undefined,
    ],
    [
      'a grant whose TTL is not a number',
      (request) =>
        request.path === '/v3/lease/grant' ? { header: header(), ID: request.body?.ID, TTL: 'lots' } : undefined,
    ],
    ['a txn without revisions', (r) => (isJoin(r.body) ? { succeeded: true, responses: [] } : undefined)],
    [
      'a txn of garbage JSON',
      (r) => (isJoin(r.body) ? { header: { revision: 'five' }, succeeded: 'yes', responses: 7 } : undefined),
    ],
    ['a txn that is a JSON array', (r) => (isJoin(r.body) ? raw(200, '[1,2,3]') : undefined)],
    ['a txn that is not JSON', (r) => (isJoin(r.body) ? raw(200, '<html>hello</html>') : undefined)],
    ['a txn answered with HTTP 500', (r) => (isJoin(r.body) ? raw(500, 'Internal Server Error') : undefined)],
    [
      'a txn answered with HTTP 500 and an etcd error',
      (r) => (isJoin(r.body) ? raw(500, '{"error":"etcdserver: boom\\u001b[31m","code":13}') : undefined),
    ],
    ['a txn whose body never ends', (r) => (isJoin(r.body) ? ENDLESS : undefined)],
    ['a txn that never answers', (r) => (isJoin(r.body) ? HANG : undefined)],
  ];
  test.each(cases)('%s', async (_name, script) => {
    const { marker, command } = marked();
    const { result, ms, afterFirstMs } = await against(script, ['run', '--ttl', '30s', 'k', '--', ...command]);
    const line = expectOneError(result, 69);
    expect(line).not.toMatch(/\x1b/);
    expect(existsSync(marker)).toBe(false);
    // Within --connect-timeout of the first request (and a little for the exit), never a pause past it.
    expect(afterFirstMs).toBeLessThan(CONNECT_TIMEOUT_MS + 400);
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
  });

  test('a txn reply of more than 64 MiB: refused, memory bounded', async () => {
    const { marker, command } = marked();
    const rss = join(tempDir(), 'rss');
    const { result, ms, fake } = await against(
      (r) => (isJoin(r.body) ? huge(80 * 1024 * 1024) : undefined),
      ['run', '--ttl', '30s', 'k', '--', ...command],
      { via: ['/usr/bin/time', '-o', rss, '-f', '%M'] },
    );
    // The server answered (no "cannot reach"), and no retry makes its reply smaller: asked once.
    expectOneError(result, 69, /^dlock: etcd:\/\/127\.0\.0\.1:\d+: a reply larger than 67108864 bytes/);
    expect(fake.requests.filter((request) => isJoin(request.body))).toHaveLength(1);
    expect(existsSync(marker)).toBe(false);
    // The reply is cut at 64 MiB: what dlock holds is that and the runtime, never the 80 MiB.
    expect(Number(readFileSync(rss, 'utf8').trim().split('\n').at(-1)) / 1024).toBeLessThan(400);
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + 3 * SLACK_MS);
  });
});

describe('acquire and release against lies', () => {
  test('acquire: a grant of another lease id is 69, and eval of its stdout fails', async () => {
    const { result } = await against(
      on('/v3/lease/grant', { header: header(), ID: '4611686018427387905', TTL: '30' }),
      ['acquire', '--no-keeper', 'k'],
    );
    expectOneError(result, 69, /granted lease 4611686018427387905/);
    expect(result.stdout).not.toMatch(/DLOCK_TOKEN=/);
  });

  const token = '0000000000000000' + (2n ** 62n + 5n).toString(16);
  const release: [string, Script][] = [
    ['without revisions', (r) => (r.path === '/v3/lease/revoke' ? { responses: 'none' } : undefined)],
    ['that is not JSON', (r) => (r.path === '/v3/lease/revoke' ? raw(200, 'not json') : undefined)],
    ['of HTTP 500', (r) => (r.path === '/v3/lease/revoke' ? raw(500, '') : undefined)],
  ];
  test.each(release)('release: a revoke %s is 69, never "released" nor "not yours"', async (_name, script) => {
    const { result } = await against(script, ['release', '-q', '--token', token, 'k']);
    expectOneError(result, 69);
  });
});

/** One key of the lock `k` under the default prefix, holding with `value`. */
function holding(value: string | Buffer): Script {
  return (request) => {
    if (request.path !== '/v3/kv/range' || request.body?.sort_target !== 'CREATE') return undefined;
    const kv = { key: b64('dlock:k/1f'), create_revision: '5', mod_revision: '5', lease: '31', value: b64(value) };
    return { header: header(), kvs: [kv], count: '1' };
  };
}

const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f\x9b]/;

describe('status of a holder whose details are forged', () => {
  const big = 'h'.repeat(1_000_000);
  const values: [string, string | Buffer][] = [
    [
      'control characters and ANSI escapes',
      JSON.stringify({
        host: 'evil\x1b[2J\x07host',
        pid: '12\r\n34',
        cmd: 'rm -rf /\x1b]0;title\x07\x9b31m',
        since_ms: 1_700_000_000_000,
        ttl_ms: 30_000,
      }),
    ],
    ['1 MB strings', JSON.stringify({ host: big, cmd: big })],
    ['a 60 kB command', JSON.stringify({ host: 'h', cmd: 'c'.repeat(60_000) })],
    ['numbers as strings', JSON.stringify({ host: 'h', pid: '77', since_ms: '1700000000000', ttl_ms: 'lots' })],
    [
      'nested objects',
      JSON.stringify({ host: { a: { b: [1, 2] } }, pid: { x: 1 }, cmd: [['deep']], since_ms: { n: 1 } }),
    ],
    ['30 000 nested arrays', '['.repeat(30_000) + ']'.repeat(30_000)],
    ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x7b, 0x22, 0x1b, 0x5b])],
  ];
  test.each(values)('%s: shown escaped or unknown, text and --json, exit 0', async (_name, value) => {
    for (const json of [false, true]) {
      const { result } = await against(holding(value), ['status', ...(json ? ['--json'] : []), 'k']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).not.toMatch(UNSAFE);
      expect(result.stdout.length).toBeLessThan(8192);
      if (json) {
        const parsed = JSON.parse(result.stdout) as { held: boolean; holder: Record<string, unknown> };
        expect(parsed.held).toBe(true);
        for (const field of ['host', 'cmd']) expect(typeof parsed.holder[field]).toBe('string');
        expect(parsed.holder.pid === null || typeof parsed.holder.pid === 'number').toBe(true);
      } else expect(result.stdout).toMatch(/held/);
    }
  });
});

test('status of a holder whose lease etcd says lasts 2^63 s, or -5 s: no crash, text and --json', async () => {
  for (const ttl of ['9223372036854775807', '-5', 'soon']) {
    const value = JSON.stringify({ host: 'h', pid: 1, cmd: 'c', since_ms: 1, ttl_ms: 1e300 });
    const forged: Script = (request, fake) =>
      request.path === '/v3/lease/timetolive'
        ? { header: header(), ID: request.body?.ID, TTL: ttl, grantedTTL: ttl }
        : holding(value)(request, fake);
    for (const json of [false, true]) {
      const { result } = await against(forged, ['status', ...(json ? ['--json'] : []), 'k']);
      expect(result.stderr, ttl).toBe('');
      expect(result.code, ttl).toBe(0);
      if (json) expect((JSON.parse(result.stdout) as { held: boolean }).held).toBe(true);
      else expect(result.stdout).toContain('ttl left none of unknown');
    }
  }
});

describe('status without a key: key names under the prefix', () => {
  const keys = [
    Buffer.from('dlock:a%2Fb/1f'),
    Buffer.from('dlock:raw/slash/2a'),
    Buffer.concat([Buffer.from('dlock:'), Buffer.from([0xff, 0xfe]), Buffer.from('/3b')]),
    Buffer.from('dlock:%zz%41/4c'),
    Buffer.from('dlock:\x1b[31mred\x07/5d'),
    Buffer.from('dlock:x/not-hex'),
    Buffer.from('dlock:/6e'),
  ];
  const listing: Script = (request) => {
    if (request.path !== '/v3/kv/range' || request.body?.limit !== '1000') return undefined;
    const kvs = keys.map((key, i) => ({ key: b64(key), create_revision: String(10 + i), lease: String(31 + i) }));
    return { header: header(), kvs, count: String(kvs.length) };
  };
  test('shown escaped in text, exact in --json; raw "/" and non-lock keys left out', async () => {
    const text = await against(listing, ['status']);
    expect(text.result.stderr).toBe('');
    expect(text.result.stdout).not.toMatch(UNSAFE);
    expect(text.result.stdout).toContain('a/b');
    expect(text.result.stdout).toContain('%zz%41');
    expect(text.result.stdout).toContain('\\x1b[31mred\\x07');
    expect(text.result.stdout).not.toContain('raw/slash');
    expect(text.result.stdout).not.toContain('not-hex');
    const json = await against(listing, ['status', '--json']);
    expect(json.result.stderr).toBe('');
    expect(json.result.stdout).not.toMatch(UNSAFE);
    const names = (JSON.parse(json.result.stdout) as { key: string }[]).map((one) => one.key);
    expect(names).toEqual(expect.arrayContaining(['a/b', '%zz%41', '\x1b[31mred\x07', '\ufffd\ufffd']));
    expect(names).not.toContain('raw/slash');
  });
});

test("status --prefix '' (to meet etcdctl lock NAME) lists the locks: its range starts at \\0, not at an empty key", async () => {
  const listing: Script = (request) =>
    request.path === '/v3/kv/range' && request.body?.key === b64('\0')
      ? { header: header(), kvs: [{ key: b64('job/1f'), create_revision: '9', lease: '31' }], count: '1' }
      : undefined;
  const { result } = await against(listing, ['status', '--prefix', '', '--json']);
  expect(result.stderr).toBe('');
  expect((JSON.parse(result.stdout) as { key: string }[]).map((one) => one.key)).toEqual(['job']);
});

describe('status without a key: a listing that goes on', () => {
  /** One page of 1000 keys of lock `name` (what dlock asks for), the last one `last`. */
  const page = (name: string, last?: Buffer) =>
    Array.from({ length: 1000 }, (_, i) => ({
      key: b64(i === 999 && last ? last : `dlock:${name}/${(i + 1).toString(16)}`),
      create_revision: String(10 + i),
      lease: String(31 + i),
    }));
  const listing = (request: { path: string; body?: Record<string, any> }) =>
    request.path === '/v3/kv/range' && request.body?.limit === '1000';

  test('"more" with the same page for ever: 69 in time, never a hang', async () => {
    const { result, afterFirstMs } = await against(
      (request) => (listing(request) ? { header: header(), kvs: page('a'), count: '5000', more: true } : undefined),
      ['status'],
    );
    expectOneError(result, 69);
    expect(afterFirstMs).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
  });

  test('"more" with new keys for ever: 69 in time, memory bounded', async () => {
    let pages = 0;
    const { result, afterFirstMs } = await against(
      (request) =>
        listing(request) ? { header: header(), kvs: page(`p${pages++}`), count: '1', more: true } : undefined,
      ['status'],
    );
    expectOneError(result, 69);
    expect(afterFirstMs).toBeLessThan(CONNECT_TIMEOUT_MS + 4 * SLACK_MS);
  });

  test('a page ending in a key that is not UTF-8: the next page starts right after its bytes', async () => {
    const last = Buffer.concat([Buffer.from('dlock:a'), Buffer.from([0xff]), Buffer.from('/5')]);
    const next = b64(Buffer.concat([last, Buffer.from([0])]));
    const { result } = await against(
      (request) => {
        if (!listing(request)) return undefined;
        if (request.body?.key === next)
          return { header: header(), kvs: [{ key: b64('dlock:z/1'), create_revision: '2000', lease: '9' }] };
        return { header: header(), kvs: page('a', last), count: '1001', more: true };
      },
      ['status', '--json'],
    );
    expect(result.stderr).toBe('');
    const names = (JSON.parse(result.stdout) as { key: string }[]).map((one) => one.key);
    expect(names).toEqual(['a', 'a\ufffd', 'z']);
  });
});

/** The lock held by another key (revision 4); dlock's own key joins at 5 and watches it. */
function busy(watch: ReturnType<Script>): Script {
  const other = { key: b64('dlock:k/aa'), create_revision: '4', mod_revision: '4', lease: '170' };
  return (request, fake) => {
    if (request.path === '/v3/kv/txn' && isJoin(request.body)) {
      const own = { key: request.body!.compare[0].key, create_revision: '5', mod_revision: '5', lease: fake.lease };
      return {
        header: header(),
        succeeded: true,
        responses: [{ response_put: {} }, { response_range: { kvs: [other], count: '2' } }],
        own,
      };
    }
    if (request.path === '/v3/kv/range' && request.body?.max_create_revision !== undefined)
      return { header: header(), kvs: [other], count: '1' };
    if (request.path === '/v3/watch') return watch;
    return undefined;
  };
}

describe('a watch that misbehaves: no busy loop, busy (75) when --wait runs out', () => {
  const created = `${JSON.stringify({ result: { header: header(), created: true } })}\n`;
  const watches: [string, ReturnType<Script>][] = [
    [
      'endless bytes without a newline',
      (response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!response.destroyed) if (!response.write(chunk)) return void response.once('drain', pump);
        };
        pump();
      },
    ],
    [
      '"created", then closed at once',
      (response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(created);
      },
    ],
    [
      'a forged deletion of the predecessor, which a read still finds',
      (response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const deletion = { type: 'DELETE', kv: { key: b64('dlock:k/aa'), mod_revision: '6' } };
        response.write(created);
        response.write(`${JSON.stringify({ result: { header: header('6'), events: [deletion] } })}\n`);
      },
    ],
  ];
  test.each(watches)('%s', async (_name, watch) => {
    const { marker, command } = marked();
    const { result, fake } = await against(busy(watch), ['run', '-q', '--wait', '3s', 'k', '--', ...command]);
    expectOneError(result, 75);
    expect(existsSync(marker)).toBe(false);
    // Bounded retries: pauses that grow (100 ms doubling to 2 s), not one watch per event-loop turn.
    expect(fake.count('/v3/watch')).toBeLessThan(15);
  });
});

test('keepalives that renew for less than the lease runs on: lost by the local deadline, 76', async () => {
  const dir = tempDir();
  const script: Script = (request) =>
    request.path === '/v3/lease/keepalive'
      ? { result: { header: header(), ID: request.body?.ID, TTL: '1' } }
      : undefined;
  const { result, ms } = await against(script, [
    'run',
    '-q',
    '--ttl',
    '3s',
    'k',
    '--',
    'sh',
    '-c',
    `touch ${dir}/ran; sleep 20; touch ${dir}/finished`,
  ]);
  expectOneError(result, 76);
  expect(existsSync(join(dir, 'ran'))).toBe(true);
  expect(existsSync(join(dir, 'finished'))).toBe(false);
  // Stopped before the lease it was granted (3 s) could have run out, not at the 20 s the command would take.
  expect(ms).toBeLessThan(3000 + SLACK_MS);
});

test('a keepalive answered without a TTL while the command runs: lost, 76', async () => {
  const dir = tempDir();
  const script: Script = (request) =>
    request.path === '/v3/lease/keepalive' ? { result: { header: header(), ID: request.body?.ID } } : undefined;
  const { result } = await against(script, [
    'run',
    '-q',
    '--ttl',
    '3s',
    'k',
    '--',
    'sh',
    '-c',
    `touch ${dir}/ran; sleep 20; touch ${dir}/finished`,
  ]);
  expectOneError(result, 76);
  expect(existsSync(join(dir, 'ran'))).toBe(true);
  expect(existsSync(join(dir, 'finished'))).toBe(false);
});
