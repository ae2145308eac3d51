// Property-based tests over what a user (or a hostile crontab line) can type: keys,
// durations, exit codes, URLs and option combinations. Every invalid input is a usage error
// (64) with one "dlock: " line naming the option, never a stack trace or 70, and never
// reaches Redis. The large runs call src/config/ in-process; a smaller sample spawns bin/dlock.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  connectionConfig,
  MAX_DURATION_MS,
  MIN_TTL_MS,
  runConfig,
  validateKey,
  type RawOptions,
  type RunConfig,
} from '../../src/config/index.js';
import type { RedisConnection } from '../../src/backends/redis/connection.js';
import { parseDuration } from '../../src/duration.js';
import { UsageError } from '../../src/errors.js';
import { keyFromLockName, lockKeys } from '../../src/backends/redis/lock/keys.js';
import { parseRedisUrl } from '../../src/backends/redis/client/url.js';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { ConnectionRecorder, errorLines, expectOneError } from '../helpers/hostile.js';

/** The documented key rule (docs/reference/commands.md), written independently of validateKey: 1-256 bytes, printable, no whitespace, no braces. */
function specValidKey(key: string): boolean {
  const bytes = Buffer.byteLength(key);
  return (
    bytes >= 1 &&
    bytes <= 256 &&
    [...key].every((c) => /^[^\p{White_Space}\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Z}{}]$/u.test(c))
  );
}

/** Characters that make keys interesting: globs, quotes, shell and Lua syntax, RESP, non-ASCII. */
const NASTY = [...'*?[]^!\\\'"`$();|&<>~#%@:/.,=+-_'];
const keyChar = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.constantFrom('a', 'Z', '0', 'é', '🔒', 'ключ'),
);
const validKey = fc.string({ unit: keyChar, minLength: 1, maxLength: 40 }).filter(specValidKey);
/** Keys that break one rule each (no NUL: it cannot be passed in argv). */
const invalidKey = fc.oneof(
  fc.constant(''),
  fc
    .tuple(
      validKey,
      fc.constantFrom(
        ' ',
        '\t',
        '\n',
        '\r\n',
        '\u00a0',
        '\u2028',
        '\u3000',
        '\x01',
        '\x1b[31m',
        '\x7f',
        '\u0085',
        '\u200b',
        '\u202e',
        '{',
        '}',
        '\ud800',
      ),
      validKey,
    )
    .map(([a, bad, b]) => a + bad + b),
  fc.constantFrom('x'.repeat(257), 'é'.repeat(129), '🔒'.repeat(65), '{tag}', 'a}b', '*\r\n*1\r\n$8\r\nFLUSHALL\r\n'),
);

const validPrefix = fc.string({ unit: keyChar, maxLength: 20 }).filter((p) => p === '' || specValidKey(p));

/** Durations the docs refuse (docs/reference/options.md) for every option (zero is refused only where noted). */
const junkDuration = fc.oneof(
  fc.string().filter((s) => parseDuration(s) === undefined),
  fc.constantFrom(
    '-1s',
    '1e3',
    '5 s',
    '5S',
    '5w',
    '1h30',
    '1m 30s',
    ' 30s',
    'NaN',
    'Infinity',
    '0x10',
    '١٢s',
    '５s',
    '.s',
    '..5s',
    '5.s',
    '+5s',
    's',
    'ms',
    '',
    ' ',
    '99999999999999999999h',
  ),
  // Past MAX_DURATION_MS (36500d).
  fc.integer({ min: 876_001, max: 1e9 }).map((h) => `${h}h`),
);

/** [option or env var, invalid value] for every duration the CLI takes. */
const badDuration = fc.oneof(
  fc.tuple(
    fc.constantFrom('--ttl', 'DLOCK_TTL'),
    fc.oneof(junkDuration, fc.constantFrom('0', '0s', '99ms', '0.09s', '0.0001')),
  ),
  fc.tuple(fc.constantFrom('--wait', 'DLOCK_WAIT', '--kill-after'), junkDuration),
  fc.tuple(fc.constant('--connect-timeout'), fc.oneof(junkDuration, fc.constantFrom('0', '0ms', '0.0001s'))),
);

const badExitCode = fc.oneof(
  fc.integer({ min: 256, max: 2 ** 40 }).map(String),
  fc.integer({ min: -(2 ** 40), max: -1 }).map(String),
  fc.string().filter((s) => !/^\d+$/.test(s.trim())),
  fc.constantFrom('1.5', '1e2', '0x1', '２', '', ' ', '75abc', '+1', '256'),
);

const SECRET_MARK = 'Sx9Q';
const password = fc
  .string({ unit: fc.constantFrom(..."abcXYZ0189-._~!$&'()*+,;=:@/?#[]%"), minLength: 4, maxLength: 16 })
  .map((p) => SECRET_MARK + p);

/** URLs that are invalid whatever the password, pointed at `port` so a mistaken connect would be seen. */
function badUrl(port: number) {
  const base = (pw: string) => `redis://user:${pw}@127.0.0.1:${port}`;
  return fc.oneof(
    fc
      .tuple(password, fc.constantFrom('x', '-1', '1.5', '99999999999', '0/1', '%30'))
      .map(([pw, db]) => `${base(pw)}/${db}`),
    fc.tuple(password, fc.constantFrom('?db=1', '?', '#x', '/0?x=y')).map(([pw, tail]) => `${base(pw)}${tail}`),
    password.map((pw) => `redis://user:${pw}%zz@127.0.0.1:${port}`),
    fc
      .tuple(password, fc.constantFrom('http://', 'redis:/', 'redis:', '', 'unix://', 'REDIS:///', 'rediss:'))
      .map(([pw, scheme]) => `${scheme}user:${pw}@127.0.0.1:${port}`),
    fc
      .tuple(password, fc.constantFrom('0', '65536', '99999', 'x'))
      .map(([pw, p]) => `redis://user:${pw}@127.0.0.1:${p}`),
    fc.tuple(password, fc.constantFrom('\t', '\x01', ' ', '\u00a0', '\n', '\x7f'), fc.nat()).map(([pw, bad, at]) => {
      const url = base(pw);
      const i = 1 + (at % (url.length - 1));
      return url.slice(0, i) + bad + url.slice(i);
    }),
  );
}

/** Call `fn`; it must either return or throw a UsageError whose message names `option`. */
function usageErrorOf(fn: () => unknown): UsageError | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
}

describe('in-process: src/config/ over thousands of inputs', () => {
  test('validateKey accepts exactly the documented keys and returns them unchanged', () => {
    fc.assert(
      fc.property(
        fc.oneof(validKey, invalidKey, fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })),
        (key) => {
          const error = usageErrorOf(() => expect(validateKey(key)).toBe(key));
          expect(error === undefined).toBe(specValidKey(key));
          if (error) expect(error.message).toMatch(/^key: |^a lock key is required/);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('a key stays inside its namespace and hash tag', () => {
    // The Cluster hash tag: the text between the first "{" and the first "}" after it.
    const hashTag = (name: string) => {
      const open = name.indexOf('{');
      const close = name.indexOf('}', open + 1);
      return open >= 0 && close > open + 1 ? name.slice(open + 1, close) : name;
    };
    fc.assert(
      fc.property(validPrefix, validKey, validPrefix, validKey, (p1, k1, p2, k2) => {
        const a = lockKeys(p1, k1);
        for (const name of [a.lock, a.fence, a.released]) {
          expect(name.startsWith(p1)).toBe(true);
          expect(hashTag(name)).toBe(k1);
        }
        expect(keyFromLockName(p1, a.lock)).toBe(k1);
        expect(keyFromLockName(p1, a.fence)).toBeUndefined();
        if (p1 !== p2 || k1 !== k2) {
          const b = lockKeys(p2, k2);
          const names = new Set([a.lock, a.fence, a.released]);
          for (const name of [b.lock, b.fence, b.released]) expect(names.has(name)).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('every duration option: a valid value or a usage error naming the option', () => {
    const anyDuration = fc.oneof(
      junkDuration,
      fc.constantFrom('0', '1', '100ms', '0.1', '2s', '1m', '1h30m', '30d', '36500d', '36501d'),
      fc.string(),
    );
    fc.assert(
      fc.property(
        fc.record({ ttl: anyDuration, wait: anyDuration, killAfter: anyDuration, connectTimeout: anyDuration }),
        (raw) => {
          const error = usageErrorOf(() => runConfig('k', ['true'], raw, {}));
          const bad: string[] = [];
          const ms = (text: string) => parseDuration(text);
          const ok = (text: string, min: number) =>
            ms(text) !== undefined && ms(text)! >= min && ms(text)! <= MAX_DURATION_MS;
          if (!ok(raw.connectTimeout, 1)) bad.push('--connect-timeout');
          if (!ok(raw.ttl, MIN_TTL_MS)) bad.push('--ttl');
          if (!ok(raw.wait, 0)) bad.push('--wait');
          if (!ok(raw.killAfter, 0)) bad.push('--kill-after');
          // Issue 31: a grace above a third of a valid lease is refused too (it was cut silently).
          else if (!bad.includes('--ttl') && ms(raw.killAfter)! > Math.floor(ms(raw.ttl)! / 3))
            bad.push('--kill-after');
          expect(error === undefined).toBe(bad.length === 0);
          if (error) expect(bad.some((option) => error.message.startsWith(`${option}: `))).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('-E: an integer from 0 to 255, anything else names --conflict-exit-code', () => {
    fc.assert(
      fc.property(fc.oneof(badExitCode, fc.integer({ min: 0, max: 255 }).map(String)), (code) => {
        const error = usageErrorOf(() =>
          expect(runConfig('k', ['true'], { conflictExitCode: code }, {}).conflictExitCode).toBe(Number(code)),
        );
        expect(error === undefined).toBe(/^\d+$/.test(code.trim()) && Number(code) <= 255);
        if (error) expect(error.message).toMatch(/^--conflict-exit-code: /);
      }),
      { numRuns: 2000 },
    );
  });

  test('any string as a URL: a target or a usage error, and the password never shows', () => {
    const anyUrl = fc.oneof(
      badUrl(6379),
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.string(),
      fc
        .tuple(fc.constantFrom('redis://', 'rediss://'), fc.string(), password, fc.string())
        .map(([s, u, pw, rest]) => `${s}${u}:${pw}@${rest}`),
    );
    fc.assert(
      fc.property(anyUrl, (url) => {
        let label = '';
        const error = usageErrorOf(() => (label = parseRedisUrl(url, '--redis').label));
        const pw = url.includes(SECRET_MARK) ? url.slice(url.indexOf(SECRET_MARK), url.lastIndexOf('@')) : undefined;
        if (error) expect(error.message).toMatch(/^--redis: /);
        if (pw) expect(error?.message ?? label).not.toContain(SECRET_MARK);
      }),
      { numRuns: 3000 },
    );
  });

  test('a %-encoded user name and password round-trip exactly', () => {
    const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).filter((s) => !/[\ud800-\udfff]/.test(s));
    fc.assert(
      fc.property(text, text, fc.integer({ min: 0, max: 15 }), (user, pw, db) => {
        const target = parseRedisUrl(
          `rediss://${encodeURIComponent(user)}:${encodeURIComponent(pw)}@127.0.0.1:6380/${db}`,
          '--redis',
        );
        expect(target).toMatchObject({ username: user, password: pw, host: '127.0.0.1', port: 6380, db, tls: true });
        expect(target.label).toBe(`rediss://${encodeURIComponent(user)}:***@127.0.0.1:6380/${db}`);
      }),
      { numRuns: 1000 },
    );
  });

  test('the holder metadata masks a Redis password where it stands (own argument, --opt=, URL), never spells it out, and holds no control characters', () => {
    const arg = fc.string({
      unit: fc.oneof(
        fc.constantFrom('*', 'a', 'b', ' ', '\n', '\x1b', '\u202e'),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      ),
      maxLength: 12,
    });
    const secret = fc.string({
      unit: fc.constantFrom('*', 'a', 'b', '\n', 'x', ',', '@', '/'),
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(fc.array(arg, { minLength: 0, maxLength: 4 }), secret, fc.boolean(), (command, pw, fromEnv) => {
        const url = fromEnv ? 'redis://127.0.0.1:6379' : `redis://:${encodeURIComponent(pw)}@127.0.0.1:6379`;
        const env = fromEnv ? { DLOCK_REDIS_PASSWORD: pw } : {};
        const placed = [pw, `--password=${pw}`, `redis://me:${encodeURIComponent(pw)}@h:1/0`];
        const config = runConfig('k', ['cmd', ...command, ...placed], { redis: [url] }, env) as RedisConnection &
          RunConfig;
        expect(config.targets[0].password).toBe(pw);
        expect(config.holderCmd).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
        expect([...config.holderCmd].length).toBeLessThanOrEqual(256);
        if ([...config.holderCmd].length < 256)
          expect(config.holderCmd.endsWith(' *** --password=*** redis://me:***@h:1/0')).toBe(true);
        // Text that merely contains the password is stored as it was, not with "***" spliced in.
        const plain = runConfig('k', ['cmd', ...command], { redis: [url] }, env);
        const expected = ['cmd', ...command].map((word) =>
          word === pw || word === encodeURIComponent(pw) ? '***' : word,
        );
        if (expected.every((word) => !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]|:\/\/|=/u.test(word)))
          expect(plain.holderCmd).toBe(expected.join(' ').slice(0, 256));
        expect(runConfig('k', ['cmd', ...command], { redis: [url], cmdMetadata: false }, env).holderCmd).toBe('');
      }),
      { numRuns: 2000 },
    );
  });

  test('prefixes: printable, no whitespace or braces, at most 128 bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(validPrefix, fc.string({ unit: 'binary', maxLength: 140 })),
        fc.boolean(),
        (prefix, fromEnv) => {
          const raw: RawOptions = fromEnv ? {} : { prefix };
          const error = usageErrorOf(() => connectionConfig(raw, fromEnv ? { DLOCK_PREFIX: prefix } : {}));
          const valid = prefix === '' || (specValidKey(prefix) && Buffer.byteLength(prefix) <= 128);
          expect(error === undefined).toBe(valid);
          if (error) expect(error.message.startsWith(fromEnv ? 'DLOCK_PREFIX: ' : '--prefix: ')).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('spawned: bin/dlock as a user runs it, never touching Redis', () => {
  let recorder: ConnectionRecorder;
  beforeAll(async () => {
    recorder = await ConnectionRecorder.start();
  });
  afterAll(async () => {
    expect(recorder.connections).toBe(0);
    await recorder.close();
  });

  /** The checks every invalid invocation must pass. */
  async function expectUsage(args: string[], env: Record<string, string>, option: string | RegExp): Promise<void> {
    const result = await dlock(args, { env: cleanEnv(env) });
    const line = expectOneError(result, 64);
    if (typeof option === 'string') expect(line).toContain(option);
    else expect(line).toMatch(option);
    expect(result.stdout).toBe('');
    expect(recorder.connections).toBe(0);
  }

  test('invalid keys, for run, status and release', async () => {
    await fc.assert(
      fc.asyncProperty(
        invalidKey.filter((k) => !k.includes('\ud800')),
        fc.constantFrom('run', 'status', 'release'),
        async (key, command) => {
          const args =
            command === 'run'
              ? ['run', '--redis', recorder.url, '--', key, '--', 'true']
              : [command, '--force', '--redis', recorder.url, '--', key];
          await expectUsage(command === 'status' ? args.filter((a) => a !== '--force') : args, {}, /key/);
        },
      ),
      { numRuns: 30 },
    );
  });

  test('invalid durations, as flags and env vars', async () => {
    await fc.assert(
      fc.asyncProperty(badDuration, fc.boolean(), async ([option, value], joined) => {
        const env = option.startsWith('DLOCK_') ? { [option]: value } : {};
        const flag = option.startsWith('--') ? (joined ? [`${option}=${value}`] : [option, value]) : [];
        // An empty DLOCK_WAIT means "not set"; that one is not an error.
        fc.pre(!(option === 'DLOCK_WAIT' && value === ''));
        await expectUsage(['run', '--redis', recorder.url, ...flag, 'k', '--', 'true'], env, option);
      }),
      { numRuns: 30 },
    );
  });

  test('invalid -E values', async () => {
    await fc.assert(
      fc.asyncProperty(badExitCode, fc.constantFrom('-E', '--conflict-exit-code'), async (code, flag) => {
        await expectUsage(['run', '--redis', recorder.url, flag, code, 'k', '--', 'true'], {}, '--conflict-exit-code');
      }),
      { numRuns: 25 },
    );
  });

  test('invalid URLs, as --redis or DLOCK_REDIS_URL: the password is never shown', async () => {
    await fc.assert(
      fc.asyncProperty(
        badUrl(recorder.port),
        fc.boolean(),
        fc.constantFrom('run', 'status'),
        async (url, fromEnv, command) => {
          const target = fromEnv ? [] : ['--redis', url];
          const args = command === 'run' ? ['run', ...target, 'k', '--', 'true'] : ['status', ...target, 'k'];
          // A comma would split DLOCK_REDIS_URL into two URLs; the error then names the first bad one.
          fc.pre(!(fromEnv && url.includes(',')));
          const result = await dlock(args, { env: cleanEnv(fromEnv ? { DLOCK_REDIS_URL: url } : {}) });
          expect(expectOneError(result, 64)).toMatch(fromEnv ? /^dlock: DLOCK_REDIS_URL: / : /^dlock: --redis: /);
          expect(result.stderr).not.toContain(SECRET_MARK);
          expect(recorder.connections).toBe(0);
        },
      ),
      { numRuns: 30 },
    );
  });

  test('arguments commander echoes back (a mistyped option, a bad choice) have their URL passwords masked', async () => {
    const secret = `${SECRET_MARK}echo`;
    const cases: [string[], RegExp][] = [
      [
        ['run', `--redis-url=redis://user:${secret}@127.0.0.1:${recorder.port}`, 'k', '--', 'true'],
        /^dlock: unknown option '--redis-url=redis:\/\/user:\*\*\*@127\.0\.0\.1:\d+'/,
      ],
      [
        ['run', '--redis', recorder.url, '--log-format', `redis://:${secret}@x`, 'k', '--', 'true'],
        /^dlock: option '--log-format <format>' argument 'redis:\/\/:\*\*\*@x' is invalid/,
      ],
      [['status', '--redis', recorder.url, 'k', `rediss://u:${secret}@x`], /^dlock: too many arguments/],
    ];
    for (const [args, message] of cases) {
      const result = await dlock(args);
      expectOneError(result, 64, message);
      expect(result.stderr).not.toContain(secret);
    }
    expect(recorder.connections).toBe(0);
  });

  /** Valid option groups for run, and invalid ones with the name the error must show. */
  const VALID: Record<string, string[]> = {
    ttl: ['--ttl', '2s'],
    wait: ['--wait', '1s'],
    conflict: ['-E', '3'],
    onLost: ['--on-lost', 'kill'],
    killAfter: ['--kill-after', '100ms'],
    connectTimeout: ['--connect-timeout', '1s'],
    prefix: ['--prefix', 'app:*?'],
    verbosity: ['-v'],
    logFormat: ['--log-format', 'json'],
    syncReplicas: ['--sync-replicas', '1'],
    cmdMetadata: ['--no-cmd-metadata'],
  };
  const INVALID: {
    flags?: string[];
    env?: Record<string, string>;
    key?: string;
    replaces: string[];
    names: string | RegExp;
  }[] = [
    { flags: ['--ttl', '50ms'], replaces: ['ttl'], names: '--ttl' },
    { flags: ['--wait', 'soon'], replaces: ['wait'], names: '--wait' },
    { flags: ['-n', '--wait', '1s'], replaces: ['wait'], names: /--wait and --no-wait/ },
    { flags: ['-E', '256'], replaces: ['conflict'], names: '--conflict-exit-code' },
    { flags: ['--on-lost', 'explode'], replaces: ['onLost'], names: '--on-lost' },
    { flags: ['--kill-after', '-1'], replaces: ['killAfter'], names: '--kill-after' },
    { flags: ['--connect-timeout', '0'], replaces: ['connectTimeout'], names: '--connect-timeout' },
    { flags: ['--prefix', 'a{b'], replaces: ['prefix'], names: '--prefix' },
    { flags: ['-q', '-v'], replaces: ['verbosity'], names: /--quiet and --verbose/ },
    { flags: ['--log-format', 'xml'], replaces: ['logFormat'], names: '--log-format' },
    { flags: ['--sync-replicas', '-1'], replaces: ['syncReplicas'], names: '--sync-replicas' },
    { flags: ['--bogus'], replaces: [], names: '--bogus' },
    { flags: ['--tls-ca', '/etc/hostname'], replaces: [], names: '--tls-ca' },
    { env: { DLOCK_TTL: '5 minutes' }, replaces: ['ttl'], names: 'DLOCK_TTL' },
    { env: { DLOCK_WAIT: 'later' }, replaces: ['wait'], names: 'DLOCK_WAIT' },
    { env: { DLOCK_PREFIX: 'a b' }, replaces: ['prefix'], names: 'DLOCK_PREFIX' },
    { env: { DLOCK_LOG_FORMAT: 'xml' }, replaces: ['logFormat'], names: 'DLOCK_LOG_FORMAT' },
    { env: { DLOCK_TLS_KEY: '/etc/hostname' }, replaces: [], names: 'DLOCK_TLS_KEY' },
    { key: 'two words', replaces: [], names: 'key' },
  ];

  test('option combinations: any valid set plus one invalid option names that option', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...INVALID),
        fc.shuffledSubarray(Object.keys(VALID)),
        async (invalid, groups) => {
          const kept = groups.filter((group) => !invalid.replaces.includes(group));
          const flags = [...kept.flatMap((group) => VALID[group]), ...(invalid.flags ?? [])];
          const args = [
            'run',
            '--redis',
            invalid.flags?.[0] === '--tls-ca' ? `rediss://127.0.0.1:${recorder.port}` : recorder.url,
            ...flags,
            '--',
            invalid.key ?? 'k',
            '--',
            'true',
          ];
          await expectUsage(args, invalid.env ?? {}, invalid.names);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('a valid set of options never gives 64 or 70: the (closed) Redis is the only failure', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(Object.keys(VALID).filter((g) => g !== 'syncReplicas')),
        validKey.filter((k) => !k.startsWith('-')),
        async (groups, key) => {
          const before = recorder.connections;
          const result = await dlock(
            ['run', '--redis', recorder.url, ...groups.flatMap((g) => VALID[g]), '--', key, '--', 'true'],
            { env: cleanEnv() },
          );
          const lines = errorLines(result.stderr);
          expect(result.code, result.stderr).toBe(69);
          expect(lines).toHaveLength(1);
          expect(lines[0]).toMatch(/^dlock: cannot reach redis:\/\/127\.0\.0\.1:\d+: /);
          expect(recorder.connections).toBeGreaterThan(before);
          recorder.connections = 0;
        },
      ),
      { numRuns: 15 },
    );
  });
});
