// A lying or broken server never crashes, hangs or misleads dlock: each lie, served by the fake
// RESP server (test/helpers/fake-redis.ts) to bin/dlock spawned as a user runs it, ends in one
// "dlock: " line and the documented exit code within the --connect-timeout bound. Redlock
// cases run two real redis-servers and one liar: the liar is one failed instance, no more.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dlock, start, type Result } from '../helpers/cli.js';
import { CLOSE, ErrorReply, FakeRedis, hugeBulk, nested, Raw, type Reply, type Script } from '../helpers/fake-redis.js';
import { expectOneError } from '../helpers/hostile.js';
import { startServers, type RedisServer } from '../../support/redis-server.mjs';

const CONNECT_TIMEOUT_MS = 1000;
/** Start-up of bin/dlock on a loaded 2-core machine, on top of the bound under test. */
const SLACK_MS = 2500;

/** Which of dlock's scripts an EVAL carries (by a line only that script has). */
function scriptOf(
  lua: string,
): 'enter' | 'leave' | 'acquire' | 'extend' | 'release' | 'raise-fence' | 'inspect' | 'force-release' {
  if (lua.includes('local function take()')) return 'enter';
  if (lua.includes("if not redis.call('ZSCORE', Q, ARGV[1]) then return 0 end")) return 'leave';
  if (lua.includes("redis.call('INCR', KEYS[2])")) return 'acquire';
  if (lua.includes('local function woken()')) return 'force-release';
  if (lua.includes("redis.call('SET', KEYS[2]")) return 'raise-fence';
  if (lua.includes("redis.call('PTTL', L), redis.call('GET', F)")) return 'inspect';
  if (lua.includes("redis.call('HGET', L, 'owner') == ARGV[1] then")) return 'release';
  return 'extend';
}

/** Answer EVAL by script; `undefined` entries get the honest-looking default below. */
function scripted(replies: Partial<Record<ReturnType<typeof scriptOf>, Reply>>): Script {
  const honest: Record<ReturnType<typeof scriptOf>, Reply> = {
    enter: [1, '5', -1],
    leave: 1,
    acquire: [1, '5'],
    extend: 1,
    release: 1,
    'raise-fence': 1,
    inspect: [-2, null, [], [], [], 0, 1_700_000_000_000],
    'force-release': [0, [], []],
  };
  return (argv) => {
    if (argv[0] !== 'EVAL') return undefined;
    const script = scriptOf(argv[1]);
    return script in replies ? replies[script] : honest[script];
  };
}

/** Run dlock against a fake and check it failed the documented way, in time, without crashing. */
async function against(
  script: Script,
  args: string[],
  url = (fake: FakeRedis) => fake.url,
): Promise<{ result: Result; ms: number; fake: FakeRedis; line: string | undefined }> {
  const fake = await FakeRedis.start(script);
  try {
    const started = Date.now();
    const result = await dlock([
      args[0],
      '--redis',
      url(fake),
      '--connect-timeout',
      `${CONNECT_TIMEOUT_MS}ms`,
      ...args.slice(1),
    ]);
    const ms = Date.now() - started;
    expect(result.signal, result.stderr).toBeNull();
    expect(result.stderr).not.toMatch(/RangeError|TypeError|Maximum call stack|Assertion|node:internal|\n\s+at /);
    return { result, ms, fake, line: undefined };
  } finally {
    await fake.close();
  }
}

async function expectInstanceFailed(
  script: Script,
  args: string[],
  pattern: RegExp,
  url?: (fake: FakeRedis) => string,
): Promise<FakeRedis> {
  const { result, ms, fake } = await against(script, args, url);
  expectOneError(result, 69, pattern);
  expect(result.stderr).not.toMatch(/busy|cannot reach/);
  expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
  return fake;
}

const INSTANCE_FAILED = /^dlock: redis:\/\/127\.0\.0\.1:\d+: the instance failed: /;

describe('enter (acquire on one instance) replies of the wrong shape: the instance failed (69), never busy (75)', () => {
  test.each<[string, Reply, RegExp]>([
    ['a string for an array', 'hello', /the enter script with "hello" \(expected/],
    ['nil', null, /with nil/],
    ['an empty array', [], /with an empty array/],
    ['a status reply "ok"', { simple: 'ok' }, /with "ok"/],
    ['{2, ...}', [2, '7'], /an array of 2 \(integer, string\)/],
    ['{1, fence} without a slot', [1, '7'], /an array of 2 \(integer, string\)/],
    ['a negative place', [0, -5, 100, '0'], /an array of 4/],
    ['a place that is an array', [0, ['x'], 100, '0'], /an array of 4 \(integer, array, integer, string\)/],
    ['an error element', [0, 1, new ErrorReply('ERR x'), '0'], /an array of 4/],
    ['a --supersede ticket that is not a whole number', [0, 1, 100, '1e9'], /an array of 4/],
    ["a waiting reply without its ticket (an older dlock's script)", [0, 1, 100], /an array of 3/],
    ['a slot past the most slots', [1, '7', 5000], /an array of 3/],
    ['a mode no dlock uses', [2, 'bogus', 1, 0, 0], /an array of 5/],
    ['a fence with letters', [1, '12abc', -1], /a fencing token of "12abc"/],
    ['a fence with a newline', [1, '12\n', -1], /a fencing token of "12\\x0a"/],
    ['a fence with NUL', [1, '12\0', -1], /a fencing token of "12\\x00"/],
    ['a negative fence', [1, '-3', -1], /a fencing token of "-3"/],
    ['a fence past 2^63-1', [1, '9223372036854775808', -1], /a fencing token of "9223372036854775808"/],
    ['an integer fence', [1, 7, -1], /a fencing token of the integer 7/],
    ['100 000 nested arrays', nested(100_000), /nested too deep or too large to read/],
    ['an array of 2^32 elements announced', new Raw('*4294967296\r\n'), /nested too deep or too large to read/],
    ['a 100 MB bulk string as the fence', [1, hugeBulk(100 * 1024 * 1024), -1], /a reply larger than 8 MiB/],
    ['a 100 MB bulk string as the mode', [2, hugeBulk(100 * 1024 * 1024), 1, 0, 0], /a reply larger than 8 MiB/],
  ])('%s', async (_, reply, pattern) => {
    const fake = await expectInstanceFailed(scripted({ enter: reply }), ['run', '-n', 'k', 'true'], pattern);
    expect(fake.names().slice(0, 3)).toEqual(['HELLO', 'EVALSHA', 'EVAL']);
  });

  test('a 100 MB reply is refused after its announced length: dlock closes the connection, most of it is never sent', async () => {
    const { result, ms, fake } = await against(scripted({ enter: [1, hugeBulk(100 * 1024 * 1024), -1] }), [
      'run',
      '-n',
      '--log-format',
      'json',
      'k',
      'true',
    ]);
    expectOneError(result, 69, /larger than 8 MiB/);
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
    expect(fake.bytesSent).toBeLessThan(50 * 1024 * 1024);
  });
});

describe('a --slots 3 grant with a slot outside 0…2: the instance failed (69), never handed to a command', () => {
  const commands: [string, string[]][] = [
    ['run', ['run', '-n', '--slots', '3', 'k', 'sh', '-c', 'echo "ran with DLOCK_SLOT=$DLOCK_SLOT"']],
    ['acquire', ['acquire', '-n', '--slots', '3', 'k']],
    ['acquire --no-keeper', ['acquire', '-n', '--no-keeper', '--slots', '3', 'k']],
  ];
  test.each([7, -1].flatMap((slot) => commands.map(([name, args]) => [slot, name, args] as const)))(
    'slot %i to %s',
    async (slot, _, args) => {
      const { result, ms } = await against(scripted({ enter: [1, '5', slot] }), args);
      expectOneError(result, 69, `the enter script with slot ${slot} (expected 0 to 2 for --slots 3)`);
      // Nothing ran, nothing was exported.
      expect(result.stdout).not.toMatch(/ran with|DLOCK_SLOT|DLOCK_TOKEN/);
      expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
    },
  );
});

describe('the other scripts', () => {
  test.each<[string, Reply]>([
    ['a string', 'x'],
    ['nil', null],
    ['{1, 2}', [1, 2]],
    ['a counter of letters', [5000, 'abc', [], [], [], 0, 1]],
    ['an odd holder list', [5000, '3', ['owner'], [], [], 0, 1]],
    ['a line of numbers', [5000, '3', [], [], [1, 2, 3], 1, 1]],
    ['no server time', [5000, '3', [], [], [], 0, null]],
    ['100 000 nested arrays', nested(100_000)],
  ])('inspect (status KEY) answered with %s: 69', async (_, reply) => {
    await expectInstanceFailed(scripted({ inspect: reply }), ['status', 'k'], INSTANCE_FAILED);
  });

  // Issue 31: a plain wait on a pipe printed "held" and went on waiting; -n and the spinner were 69.
  test.for<[string, string[]]>([
    ['text on a pipe', []],
    ['--quiet', ['-q']],
    ['json', ['--log-format', 'json']],
    ['-n', ['-n']],
  ])(
    'a waiter whose inspect is answered with a malformed holder list (%s): 69 at once, never a wait',
    async ([, flags]) => {
      const fake = await FakeRedis.start(
        scripted({ enter: [0, 1, 100, '0'], inspect: [5000, '3', ['owner'], [], [], 0, 1] }),
      );
      try {
        const started = Date.now();
        const waiter = start([
          'run',
          '--redis',
          fake.url,
          '--connect-timeout',
          `${CONNECT_TIMEOUT_MS}ms`,
          ...flags,
          'k',
          'true',
        ]);
        const stop = setTimeout(() => waiter.process.kill('SIGKILL'), 10_000);
        const result = await waiter.result.finally(() => clearTimeout(stop));
        expect(result.code, result.stderr).toBe(69);
        expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(/the instance failed: /);
        expect(Date.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
      } finally {
        await fake.close();
      }
    },
  );

  test('a holder whose fence field is not a token is only shown (escaped), never used: status says who holds it', async () => {
    const fake = await FakeRedis.start(
      scripted({
        inspect: [
          5000,
          '3',
          ['owner', 'o', 'fence', '3; rm -rf /\x1b[2J', 'host', 'h', 'pid', '1'],
          [],
          [],
          0,
          1_700_000_000_000,
        ],
      }),
    );
    try {
      const result = await dlock(['status', '--redis', fake.url, 'k']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('  fence    3; rm -rf /\\x1b[2J\n');
    } finally {
      await fake.close();
    }
  });

  test.each<[string, Reply]>([
    ['a string', 'x'],
    ['[]', []],
    ['a negative ttl', [-7, [], []]],
    ['the holders of --slots as numbers', [0, [], [1, 2]]],
  ])('force-release (release --force) answered with %s: 69', async (_, reply) => {
    await expectInstanceFailed(scripted({ 'force-release': reply }), ['release', '--force', 'k'], INSTANCE_FAILED);
  });

  test('extend answered with garbage: the lock counts as lost (76) within the TTL, the child is stopped', async () => {
    // A TTL of 3s gives each renewal 300ms (ttl/10) to answer, even on a loaded machine.
    const { result, ms } = await against(scripted({ extend: [2] }), ['run', '--ttl', '3s', 'k', 'sleep', '30']);
    expect(result.code).toBe(76);
    expect(result.stderr).toMatch(/the instance failed: it answered the extend script with an array of 1/);
    expect(result.stderr).toMatch(/^dlock: lost k/m);
    expect(ms).toBeLessThan(3000 + SLACK_MS);
  });
});

describe('--once-per and history replies', () => {
  test.each<[string, Reply]>([
    ['{3} alone', [3]],
    ['{3, mark, ms} without the server time', [3, '{}', 5000]],
    ['a mark that is an array', [3, ['x'], 5000, 1_700_000_000_000]],
    ['a left time of letters', [3, '{}', 'abc', 1_700_000_000_000]],
    ['a negative server time', [3, '{}', 5000, -1]],
    ['a 100 MB mark', [3, hugeBulk(100 * 1024 * 1024), 5000, 1_700_000_000_000]],
  ])('enter answered "done" with %s: 69', async (_, reply) => {
    await expectInstanceFailed(
      scripted({ enter: reply }),
      ['run', '-n', '--once-per', '1m', 'k', 'true'],
      INSTANCE_FAILED,
    );
  });

  test('a forged done mark (not JSON, or JSON with escapes) is only shown, escaped: the run is turned away (75), one line', async () => {
    for (const mark of [
      'not json',
      JSON.stringify({ host: 'h\x1b[2J', pid: { x: 1 }, started_ms: 'soon', finished_ms: '1700000000000' }),
    ]) {
      const { result } = await against(scripted({ enter: [3, mark, 60_000, 1_700_000_000_000] }), [
        'run',
        '-n',
        '--once-per',
        '1m',
        'k',
        'true',
      ]);
      expectOneError(result, 75, /^dlock: k is done until 2023-11-14T22:14:20Z \(--once-per 1m\): it last succeeded /);
      expect(result.stderr).not.toContain('\x1b');
    }
  });

  test.each<[string, Reply]>([
    ['a string', 'x'],
    ['an entry without fields', [['1-0']]],
    ['an ID that is not one', [['later', ['event', 'released']]]],
    ['an odd field list', [['1-0', ['event']]]],
    ['fields that are numbers', [['1-0', [1, 2]]]],
    ['100 000 nested arrays', nested(100_000)],
  ])('XREVRANGE (history) answered with %s: 69', async (_, reply) => {
    await expectInstanceFailed(
      (argv) => (argv[0] === 'XREVRANGE' ? reply : undefined),
      ['history', 'k'],
      INSTANCE_FAILED,
    );
  });

  test('forged history fields are shown escaped', async () => {
    const { result } = await against(
      (argv) =>
        argv[0] === 'XREVRANGE'
          ? [['1700000000000-0', ['event', 'released', 'host', 'h\x1b[2J', 'exit', '0', 'cmd', 'x\u202ey']]]
          : undefined,
      ['history', 'k'],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('h\\x1b[2J');
    expect(result.stdout).toContain('x\\u202ey');
    expect(result.stdout).not.toContain('\x1b');
  });
});

describe('the connection, pub/sub, Cluster and Sentinel', () => {
  test.each<[string, Reply]>([
    ['100 000 nested arrays', nested(100_000)],
    ['a 100 MB bulk string', hugeBulk(100 * 1024 * 1024)],
  ])('HELLO answered with %s: 69', async (_, reply) => {
    await expectInstanceFailed(
      (argv) => (argv[0] === 'HELLO' ? reply : undefined),
      ['run', 'k', 'true'],
      INSTANCE_FAILED,
    );
  });

  /** Who holds it, as inspect answers (a waiter reads it whatever it shows). */
  const HELD: Reply = [5000, '3', ['owner', 'o', 'fence', '3', 'host', 'h', 'pid', '1'], [], [], 0, 1_700_000_000_000];
  /** The lock is held by someone else, so dlock waits and subscribes; the subscription lies. */
  const busyThen =
    (subscribe: Script): Script =>
    (argv, conn) =>
      argv[0] === 'EVAL' && scriptOf(argv[1]) === 'enter'
        ? [0, 1, 60_000, '0']
        : argv[0] === 'EVAL' && scriptOf(argv[1]) === 'inspect'
          ? HELD
          : argv[0] === 'EVAL'
            ? 0
            : subscribe(argv, conn);

  test.each<[string, Script]>([
    ['SUBSCRIBE answered with a string', (argv) => (argv[0] === 'SUBSCRIBE' ? 'x' : undefined)],
    ['SUBSCRIBE answered with nested arrays', (argv) => (argv[0] === 'SUBSCRIBE' ? nested(100_000) : undefined)],
    [
      'a message whose channel is nil',
      (argv, conn) => {
        if (argv[0] !== 'SUBSCRIBE') return undefined;
        setTimeout(() => conn.push(['message', null, 5]), 50);
        return ['subscribe', argv[1], 1];
      },
    ],
    [
      'a message of the wrong length',
      (argv, conn) => {
        if (argv[0] !== 'SUBSCRIBE') return undefined;
        setTimeout(() => conn.push(['message', argv[1]]), 50);
        return ['subscribe', argv[1], 1];
      },
    ],
  ])('malformed pub/sub while waiting (%s): 69, not a wait until --wait runs out', async (_, subscribe) => {
    // -q: the status line a wait prints when it starts is not what this is about.
    const { result, ms } = await against(busyThen(subscribe), ['run', '-q', '--wait', '20s', 'k', 'true']);
    expectOneError(result, 69, /the instance failed: it sent a (malformed pub\/sub message|reply nested too deep)/);
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
  });

  test.each<[string, Reply]>([
    ['nil', null],
    ['a string', 'slots'],
    ['a slot range of 10^12 slots', [[0, 1e12, ['127.0.0.1', 7000]]]],
    ['a node without a host', [[0, 16383, [null, 7000]]]],
    ['100 000 nested arrays', nested(100_000)],
  ])('CLUSTER SLOTS answered with %s: 69', async (_, reply) => {
    await expectInstanceFailed(
      (argv) => (argv[0] === 'CLUSTER' ? reply : undefined),
      ['run', 'k', 'true'],
      /^dlock: redis\+cluster:\/\/\S+: no cluster node answered \(the instance failed: /,
      (fake) => `redis+cluster://127.0.0.1:${fake.port}`,
    );
  });

  test.each<[string, Reply]>([
    ['a number', 5],
    ['an array of 3', ['127.0.0.1', '6379', 'x']],
    ['a garbage host', ['\0\xff bad host', '6379']],
    ['a host that is an array', [['127.0.0.1'], '6379']],
    ['a port out of range', ['127.0.0.1', '99999']],
  ])('SENTINEL get-master-addr-by-name answered with %s: 69', async (_, reply) => {
    await expectInstanceFailed(
      (argv) =>
        argv[0] === 'SENTINEL' && argv[1] === 'get-master-addr-by-name'
          ? reply
          : argv[0] === 'SENTINEL'
            ? []
            : undefined,
      ['run', 'k', 'true'],
      /^dlock: redis\+sentinel:\/\/\S+: the instance failed: the sentinel answered an address that is not \[host, port\]$/,
      (fake) => `redis+sentinel://127.0.0.1:${fake.port}/mymaster`,
    );
  });

  test('a connection closed instead of a reply: 69 within --connect-timeout (a lost connection, retried until then)', async () => {
    const { result, ms } = await against((argv) => (argv[0] === 'EVAL' ? CLOSE : undefined), ['run', 'k', 'true']);
    // The script may have run before the connection closed: dlock tries to undo it (owner-checked)
    // and, when that fails too, says the lock it may have taken expires by itself.
    expectOneError(
      result,
      69,
      /^dlock: cannot reach redis:\/\/127\.0\.0\.1:\d+: connection lost(; could not undo the attempt on redis:\/\/127\.0\.0\.1:\d+: [^;]+ \(a lock it took there expires by itself within 30s\))?$/,
    );
    // Retried until --connect-timeout, and the undo as long again: the attempt in flight then may take one more.
    expect(ms).toBeLessThan(3 * CONNECT_TIMEOUT_MS + SLACK_MS);
  });
});

describe('status without a key ends within --connect-timeout', () => {
  let cursor = 0;
  test.each<[string, Script, RegExp]>([
    [
      'a cursor that never comes back to 0',
      (argv) => (argv[0] === 'SCAN' ? [String(++cursor), []] : undefined),
      /SCAN did not finish within --connect-timeout \(1s; a larger one lists more keys\)/,
    ],
    [
      'a string for the page',
      (argv) => (argv[0] === 'SCAN' ? 'x' : undefined),
      /the instance failed: it answered SCAN with "x"/,
    ],
    [
      'keys that are not strings',
      (argv) => (argv[0] === 'SCAN' ? ['0', [5, ['x']]] : undefined),
      /the instance failed: it answered SCAN with an array of 2/,
    ],
    [
      'a cursor with letters',
      (argv) => (argv[0] === 'SCAN' ? ['1x', []] : undefined),
      /the instance failed: it answered SCAN/,
    ],
  ])('%s: 69', async (_, script, pattern) => {
    const { result, ms, fake } = await against(script, ['status']);
    expectOneError(result, 69, pattern);
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + SLACK_MS);
    expect(fake.names()[0]).toBe('HELLO');
  });
});

describe('Redlock: two honest instances and a liar', () => {
  let servers: RedisServer[];
  beforeAll(async () => {
    servers = await startServers(2);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  async function runWithLiar(key: string, liar: Script): Promise<{ result: Result; fake: FakeRedis }> {
    const fake = await FakeRedis.start(liar);
    try {
      const result = await dlock([
        'run',
        '--redis',
        servers[0].url,
        '--redis',
        servers[1].url,
        '--redis',
        fake.url,
        '--connect-timeout',
        '1s',
        key,
        'sh',
        '-c',
        'printf %s "$DLOCK_FENCING_TOKEN"',
      ]);
      return { result, fake };
    } finally {
      await fake.close();
    }
  }

  test.each<[string, Reply]>([
    ['a fence past 2^63-1', [1, '99999999999999999999999']],
    ['a fence with letters', [1, '7e99']],
    ['nested arrays', nested(100_000)],
  ])(
    'a liar answering acquire with %s does not spread: the token and the honest counters stay theirs',
    async (_, reply) => {
      const key = `liar-fence-${Math.random().toString(36).slice(2)}`;
      const { result } = await runWithLiar(key, scripted({ acquire: reply }));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('1');
      for (const server of servers) expect(await server.client().get(`dlock:{${key}}:fence`)).toBe('1');
      expect(result.stderr).not.toMatch(/RangeError|TypeError|\n\s+at /);
    },
  );

  test('a liar answering raise-fence and release with garbage (nested arrays) is one failed instance: the run succeeds', async () => {
    const key = `liar-raise-${Math.random().toString(36).slice(2)}`;
    const { result, fake } = await runWithLiar(
      key,
      scripted({ acquire: [1, '1'], 'raise-fence': nested(100_000), release: nested(100_000) }),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('1');
    expect(fake.names()).toContain('EVAL');
    for (const server of servers) expect(await server.client().exists(`dlock:{${key}}`)).toBe(0);
  });
});

describe('--tls-ca that is not a small regular file: 64, naming the option, at once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dlock-tls-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each<[string, () => string, RegExp]>([
    ['/dev/zero', () => '/dev/zero', /not a regular file/],
    [
      'a FIFO nobody writes to',
      () => (execFileSync('mkfifo', [join(dir, 'fifo')]), join(dir, 'fifo')),
      /not a regular file/,
    ],
    [
      'a 2 MiB file',
      () => (writeFileSync(join(dir, 'big.pem'), Buffer.alloc(2 * 1024 * 1024, 'A')), join(dir, 'big.pem')),
      /larger than 1 MiB/,
    ],
  ])('%s', async (_, path, pattern) => {
    const started = Date.now();
    const result = await dlock(['run', '--redis', 'rediss://127.0.0.1:1', '--tls-ca', path(), 'k', 'true']);
    expectOneError(result, 64, /^dlock: --tls-ca: /);
    expect(result.stderr).toMatch(pattern);
    expect(Date.now() - started).toBeLessThan(SLACK_MS);
  });
});

describe("a script's refusal of a wrong-typed key names that key (lock/lua/common.lua, lock/foreign.ts)", () => {
  /** The fake's scripts answer as `scripted`, and TYPE by key name (`none` for the others). */
  function typed(replies: Parameters<typeof scripted>[0], types: Record<string, string>): Script {
    const base = scripted(replies);
    return (argv, conn) => (argv[0] === 'TYPE' ? { simple: types[argv[1]] ?? 'none' } : base(argv, conn));
  }

  const refused = (index: number, kind: string) => new ErrorReply(`WRONGTYPE dlock KEYS[${index}] ${kind}`);
  const plain = new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value');
  test.each<[string, Reply, Record<string, string>, RegExp]>([
    [
      'KEYS[4] (the line) named by enter',
      refused(4, 'zset'),
      { 'dlock:{k}:line': 'string' },
      /dlock:\{k\}:line holds a string, not dlock's line/,
    ],
    [
      'KEYS[6] (the line details) named by enter',
      refused(6, 'hash'),
      { 'dlock:{k}:line:info': 'list' },
      /dlock:\{k\}:line:info holds a list, not/,
    ],
    [
      'KEYS[99]: no such key; TYPE finds the one at fault',
      refused(99, 'zset'),
      { 'dlock:{k}:line:expiry': 'set' },
      /:line:expiry holds a set/,
    ],
    [
      'a plain WRONGTYPE; TYPE finds the one at fault',
      plain,
      { 'dlock:{k}:holders': 'hash' },
      /dlock:\{k\}:holders holds a hash, not/,
    ],
    [
      'a type name with a control character: unknown',
      refused(4, 'zset'),
      { 'dlock:{k}:line': 'str\x1b[2Jing' },
      /:line holds a value dlock did not write/,
    ],
  ])('%s', async (_, reply, types, pattern) => {
    const { result } = await against(typed({ enter: reply }, types), ['run', '-n', 'k', 'true']);
    const line = expectOneError(result, 69, pattern);
    expect(line).not.toContain(':fence');
    expect(line).not.toContain('\x1b');
  });
});
