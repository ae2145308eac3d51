// Issue 11, "trust nothing": anyone who can write to Redis can forge a lock hash or create keys
// with hostile names. Whatever they write, dlock's output (status text, the table, --json, the
// busy line, the spinner, JSON events, release --force) holds no raw control or format
// character, stays valid JSON of a stable shape, never crashes on a bad number, and a huge
// field neither slows the spinner nor delays SIGTERM. Forged hashes are written to a real
// redis-server; the spinner is seen through a pseudo-terminal (script(1)).

import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { describeHolder, describeSnapshot } from '../../src/views/holder-text.js';
import { publicHolder } from '../../src/views/instance-views.js';
import { describe as describeStatus, table } from '../../src/views/status-text.js';
import { holderFromReply } from '../../src/backends/redis/lock/holder.js';
import { cut, printable, SHOWN_MAX, toJson } from '../../src/untrusted.js';
import { cleanEnv, DLOCK, dlock, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

/** What must never be printed raw (the newline ending lines aside). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const unsafeIn = (text: string) => UNSAFE.exec(text.replace(/\n/g, ''))?.[0];

/**
 * Exactly the sequences ora and the pseudo-terminal write around the spinner: synchronized
 * output on/off, cursor to column 1, clear to end of line, one line up, cyan and default
 * colour; the pty turns every "\n" into "\r\n".
 */
const ORA_SEQUENCES = /\x1b\[\?2026[hl]|\x1b\[1G|\x1b\[0K|\x1b\[1A|\x1b\[3[69]m|\r(?=\n)/g;

let redis: RedisServer;
let admin: Redis;
useRedisServer((server) => {
  redis = server;
  admin = server.client();
});

/** Characters a forger would pick, and any code point at all. */
const nasty = fc.constantFrom(
  '\x1b',
  '\x1b[2J',
  '\x1b]0;title\x07',
  '\x07',
  '\x00',
  '\x08',
  '\r',
  '\n',
  '\t',
  '\x7f',
  '\x85',
  '\x9b',
  '\x9b31m',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u200f',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '\u{e0001}',
  '"',
  '\\',
  '{',
  '}',
  '…',
);
const nastyText = fc.string({
  unit: fc.oneof(nasty, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  maxLength: 40,
});
/** A field as a forger writes it: nasty text, raw bytes (invalid UTF-8 too), a bad number, or huge. */
const field = fc.oneof(
  nastyText,
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
  fc.constantFrom('', 'abc', '1e300', '-5', 'NaN', '0', '1.5', ' 42', '99999999999999999999', String(Date.now())),
  fc.integer({ min: 300, max: 20_000 }).chain((n) => nasty.map((c) => `${c}x`.repeat(n))),
);
const numberField = fc.oneof(field, fc.nat().map(String), fc.constant(String(Date.now() - 5000)));
const forgedHash = fc.record(
  {
    owner: fc.oneof(fc.constant(''), fc.string({ maxLength: 8 })),
    fence: field,
    host: field,
    pid: numberField,
    // The command a --no-keeper hold stores: status says why it has no process, whatever else is forged.
    cmd: fc.oneof(field, fc.constant('dlock acquire --no-keeper')),
    since_ms: numberField,
    ttl_ms: numberField,
  },
  { requiredKeys: ['owner'] },
);
/** A valid dlock key (printable, no whitespace, no braces) made of the characters shells and globs care about. */
const validKey = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom(...'*?[]^!\\\'"`$();|&<>~#%@:/.,=+-_…'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 24,
  })
  .filter((k) => Buffer.byteLength(k) <= 256 && !/[\s\p{C}\p{Z}{}]/u.test(k));

/** HGETALL's flat reply as ioredis gives it (UTF-8 decoded). */
function flatReply(hash: Record<string, string | Buffer | undefined>): string[] {
  return Object.entries(hash).flatMap(([name, value]) =>
    value === undefined ? [] : [name, Buffer.from(value as string).toString()],
  );
}

describe('the formatting functions (in process)', () => {
  test('printable leaves nothing unsafe and changes nothing safe; toJson is valid, exact and has nothing unsafe raw', () => {
    fc.assert(
      fc.property(fc.oneof(nastyText, fc.string({ unit: 'binary' })), (text) => {
        const shown = printable(text);
        expect(UNSAFE.test(shown)).toBe(false);
        if (!UNSAFE.test(text)) expect(shown).toBe(text);
        const json = toJson({ text, list: [text] });
        expect(unsafeIn(json)).toBeUndefined();
        expect(json).not.toContain('\n');
        expect(JSON.parse(json)).toEqual({ text, list: [text] });
      }),
      { numRuns: 5000 },
    );
  });

  test('printable: \\xNN up to U+00FF, \\uNNNN, \\u{...}', () => {
    expect(printable('a\x1b[31mb\x9b\u202e\u2028\ud800\u{e0001}\x7f\n')).toBe(
      'a\\x1b[31mb\\x9b\\u202e\\u2028\\ud800\\u{e0001}\\x7f\\x0a',
    );
    expect(toJson('\x1b\x7f\x9b\u202e\u2028\ud800\u{e0001}')).toBe(
      '"\\u001b\\u007f\\u009b\\u202e\\u2028\\ud800\\udb40\\udc01"',
    );
  });

  test('cut keeps SHOWN_MAX code points, never splits a pair, and says how many more there were', () => {
    expect(cut('x'.repeat(SHOWN_MAX))).toBe('x'.repeat(SHOWN_MAX));
    expect(cut('x'.repeat(1_000_000))).toBe(`${'x'.repeat(SHOWN_MAX)}…(${1_000_000 - SHOWN_MAX} more)`);
    expect(cut('🔒'.repeat(SHOWN_MAX + 3))).toBe(`${'🔒'.repeat(SHOWN_MAX)}…(3 more)`);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 600 }), fc.integer({ min: 1, max: 300 }), (text, max) => {
        const shown = cut(text, max);
        const points = [...text];
        expect(shown).toBe(
          points.length <= max ? text : `${points.slice(0, max).join('')}…(${points.length - max} more)`,
        );
      }),
      { numRuns: 2000 },
    );
  });

  test('any forged hash: every text status, the table, the busy line and the spinner build is safe; JSON keeps its shape', () => {
    const now = Date.now();
    const shape = Object.keys(publicHolder(holderFromReply(['owner', 'o'])!, 1)).sort();
    fc.assert(
      fc.property(
        forgedHash,
        fc.oneof(validKey, nastyText),
        fc.integer({ min: -2, max: 10 ** 9 }),
        (hash, key, pttl) => {
          const holder = holderFromReply(flatReply(hash))!;
          for (const text of [holder.host, holder.pid, holder.cmd, holder.fence])
            expect([...text].length).toBeLessThanOrEqual(SHOWN_MAX + 20);
          const texts = [
            describeStatus(key, holder, pttl, now),
            table([{ key, holder, ttlMs: pttl }], now),
            describeHolder(holder, pttl, now),
            describeSnapshot({ holder, ttlLeftMs: pttl, clock: { serverMs: now, readAt: 0 } }, 0),
          ];
          for (const text of texts) expect(unsafeIn(text), JSON.stringify(text)).toBeUndefined();
          const json = toJson(publicHolder(holder, pttl));
          expect(unsafeIn(json)).toBeUndefined();
          const parsed = JSON.parse(json);
          const extra = [
            // Closed is what release --force leaves (forced_ms), not an owner missing (a store's own holder has none).
            ...(holder.forcedMs > 0 ? ['closed'] : []),
            ...(hash.cmd === 'dlock acquire --no-keeper' ? ['no_keeper'] : []),
          ];
          expect(Object.keys(parsed).sort()).toEqual([...shape, ...extra].sort());
          if (hash.cmd === 'dlock acquire --no-keeper')
            for (const text of texts) expect(text).not.toContain('not running');
          expect(parsed.since === null || !Number.isNaN(Date.parse(parsed.since))).toBe(true);
          for (const name of ['pid', 'since_ms', 'ttl_ms'])
            expect(parsed[name] === null || Number.isSafeInteger(parsed[name])).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

/** Write a forged lock hash `name` (PEXPIRE 10 min), fields exactly as given (Buffers as bytes). */
async function forge(name: string, hash: Record<string, string | Buffer | undefined>): Promise<void> {
  await admin.del(name);
  const fields = Object.entries(hash).filter((entry): entry is [string, string | Buffer] => entry[1] !== undefined);
  await admin.hset(name, Object.fromEntries(fields));
  await admin.pexpire(name, 600_000);
}

/** Run a shell script in a pseudo-terminal of 100 columns (stderr a TTY, CI unset), as a user at a terminal. */
function inTerminal(script: string, env: Record<string, string>) {
  const child = spawn('script', ['-qfec', `stty cols 100 rows 40; ${script}`, '/dev/null'], {
    env: cleanEnv({ DLOCK, REDIS: redis.url, TERM: 'xterm', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  child.stdout.on('data', (d) => (seen += d));
  child.stderr.on('data', (d) => (seen += d));
  const result = new Promise<string>((resolve) => child.on('close', () => resolve(seen)));
  return { child, seen: () => seen, result };
}

describe('bad numbers are unknown, never a crash', () => {
  const BAD = ['abc', '1e300', '-5', 'NaN', '', '99999999999999999999', '9007199254740993'];

  test('since_ms, ttl_ms and pid that are not numbers: status (text, table, --json) and the busy line say unknown / null', async () => {
    const prefix = 'badnum:';
    for (const [i, bad] of BAD.entries()) {
      await forge(`${prefix}{bad-${i}}`, {
        owner: 'o',
        fence: '7',
        host: 'h',
        pid: bad === '' ? 'x' : bad,
        cmd: 'c',
        since_ms: bad,
        ttl_ms: bad,
      });
    }
    const list = await dlock(['status', '--json', '--redis', redis.url, '--prefix', prefix]);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(BAD.length);
    for (const row of rows)
      expect(row).toMatchObject({ pid: null, since: null, since_ms: null, ttl_ms: null, fence: '7' });

    const text = await dlock(['status', '--redis', redis.url, '--prefix', prefix]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n').slice(1);
    expect(lines).toHaveLength(BAD.length);
    for (const line of lines) expect(line).toMatch(/^bad-\d +h +\S+ +unknown +\S+ +7 +c$/);

    for (const i of [0, 1, 2]) {
      const one = await dlock(['status', '--redis', redis.url, '--prefix', prefix, `bad-${i}`]);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout).toContain(`  pid      ${BAD[i]}\n  command  c\n  since    unknown\n  ttl left `);
      expect(one.stdout).toMatch(/ttl left \S+ of unknown\n/);
    }
    const busy = await dlock(['run', '-n', '--redis', redis.url, '--prefix', prefix, 'bad-1', '--', 'true']);
    expect(busy.code).toBe(75);
    expect(busy.stderr).toMatch(
      /^dlock: bad-1 is busy \(held by h pid 1e300, fence 7, expires in [^)]*\); not acquired\n$/,
    );
  });
});

test('forged max_hold_ms and beat_ms: a number is shown as a number, anything else not at all', async () => {
  const prefix = 'badbound:';
  await forge(`${prefix}{good}`, {
    owner: 'o',
    fence: '7',
    host: 'h',
    pid: '1',
    cmd: 'c',
    since_ms: String(Date.now() - 60_000),
    ttl_ms: '30000',
    max_hold_ms: '7200000',
    beat_ms: String(Date.now() - 3_000),
  });
  const good = await dlock(['status', '--redis', redis.url, '--prefix', prefix, 'good']);
  expect(good.stdout).toMatch(/\n {2}bound {4}held 1m\S* of --max-hold 2h\n {2}beat {5}last heartbeat \d\S*s ago\n$/);
  for (const [i, bad] of BAD_BOUNDS.entries()) {
    await forge(`${prefix}{bad-${i}}`, {
      owner: 'o',
      fence: '7',
      host: 'h',
      pid: '1',
      cmd: 'c',
      since_ms: bad,
      ttl_ms: '1',
      max_hold_ms: bad,
      beat_ms: bad,
    });
    const text = await dlock(['status', '--redis', redis.url, '--prefix', prefix, `bad-${i}`]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(/bound|beat/);
    const json = await dlock(['status', '--json', '--redis', redis.url, '--prefix', prefix, `bad-${i}`]);
    expect(JSON.parse(json.stdout).holder).not.toHaveProperty('max_hold_ms');
    expect(JSON.parse(json.stdout).holder).not.toHaveProperty('last_heartbeat_ms');
  }
});

const BAD_BOUNDS = ['abc', '1e300', '-5', '', '\x1b[2J', '99999999999999999999'];

describe('escaped in every output', () => {
  const EVIL = 'evil\x1b[2J\x1b]0;pwned\x07\u202ereversed\x9b31m\u2028\x7f';
  const SHOWN = 'evil\\x1b[2J\\x1b]0;pwned\\x07\\u202ereversed\\x9b31m\\u2028\\x7f';

  test('status, the table, --json, the busy line (text and json) and release --force', async () => {
    const prefix = 'evil:';
    await forge(`${prefix}{k}`, {
      owner: 'o',
      fence: EVIL,
      host: EVIL,
      pid: EVIL,
      cmd: EVIL,
      since_ms: String(Date.now()),
      ttl_ms: '600000',
    });
    await forge(`${prefix}{${EVIL}}`, {
      owner: 'o',
      fence: '1',
      host: 'h',
      pid: '1',
      cmd: 'c',
      since_ms: String(Date.now()),
      ttl_ms: '600000',
    });
    const args = ['--redis', redis.url, '--prefix', prefix];
    const results: [string, Result][] = [
      ['status k', await dlock(['status', ...args, 'k'])],
      ['status', await dlock(['status', ...args])],
      ['status --json k', await dlock(['status', '--json', ...args, 'k'])],
      ['status --json', await dlock(['status', '--json', ...args])],
      ['run -n', await dlock(['run', '-n', ...args, 'k', '--', 'true'])],
      ['run -n json', await dlock(['run', '-n', '--log-format', 'json', ...args, 'k', '--', 'true'])],
      ['release --force', await dlock(['release', '--force', '--log-format', 'json', ...args, 'k'])],
    ];
    for (const [name, result] of results) {
      expect(unsafeIn(result.stdout), name).toBeUndefined();
      expect(unsafeIn(result.stderr), name).toBeUndefined();
    }
    const [status, list, json, listJson, busy, busyJson, released] = results.map(([, result]) => result);
    expect(status.stdout).toContain(`  host     ${SHOWN}\n  pid      ${SHOWN}\n  command  ${SHOWN}\n`);
    expect(list.stdout).toContain(`${SHOWN}  h`);
    expect(JSON.parse(json.stdout).holder).toMatchObject({ host: EVIL, cmd: EVIL, fence: EVIL, pid: null });
    expect((JSON.parse(listJson.stdout) as { key: string }[]).map((row) => row.key).sort()).toEqual([EVIL, 'k'].sort());
    expect(busy.stderr).toMatch(/^dlock: k is busy \(held by [^\n]*\); not acquired\n$/);
    expect(busy.stderr).toContain(`held by ${SHOWN} pid ${SHOWN}, for `);
    expect(busy.stderr).toContain(`, fence ${SHOWN}, expires in `);
    expect(JSON.parse(busyJson.stderr)).toMatchObject({ event: 'busy', holder: { host: EVIL, cmd: EVIL } });
    expect(released.code).toBe(0);
    expect(released.stdout).toContain(`held by ${SHOWN} pid ${SHOWN}`);
    expect(released.stdout).toContain(`(command: ${SHOWN})`);
    expect(JSON.parse(released.stderr)).toMatchObject({ event: 'force-released', holder: { host: EVIL } });
  });

  test("a server's error text is escaped too (a listener that answers every command with a hostile -ERR)", async () => {
    const sockets = new Set<Socket>();
    const server: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => socket.write(`-ERR ${EVIL}${'x'.repeat(100_000)}\r\n`));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `redis://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      for (const args of [
        ['status', 'k'],
        ['run', 'k', '--', 'true'],
        ['release', '--force', 'k'],
        ['status', '--log-format', 'json', 'k'],
      ]) {
        const result = await dlock([...args.slice(0, 1), '--redis', url, '--connect-timeout', '2s', ...args.slice(1)]);
        expect(result.code, result.stderr).toBe(69);
        expect(unsafeIn(result.stderr), args.join(' ')).toBeUndefined();
        expect(result.stderr).toContain(args.includes('json') ? SHOWN.replace(/\\/g, '\\\\') : SHOWN);
        // Cut: 100 KB of server text is not printed.
        expect(result.stderr.length).toBeLessThan(2_000);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a huge field changes nothing', () => {
  test('a forged 1 MB host: the spinner shows it cut, and SIGTERM during the wait exits 143 at once', async () => {
    await forge('dlock:{forged-1m}', {
      owner: 'o',
      fence: '1',
      host: 'h'.repeat(1_000_000),
      pid: '1',
      cmd: 'c'.repeat(1_000_000),
      since_ms: String(Date.now()),
      ttl_ms: '600000',
    });
    const dir = tempDir();
    execFileSync('mkfifo', [join(dir, 'go')]);
    // The shell signals dlock and times the exit itself, with the same clock on both sides.
    const terminal = inTerminal(
      `"$DLOCK" run --redis "$REDIS" -- forged-1m -- true & p=$!; echo $p >"$DIR/pid"; read go <"$DIR/go"; ` +
        `t0=$(date +%s%N); kill -TERM $p; wait $p; rc=$?; t1=$(date +%s%N); echo "$rc $(( (t1 - t0) / 1000000 ))" >"$DIR/result"`,
      { DIR: dir },
    );
    // Cut to the terminal's 100 columns (the field itself was cut to 256 first): one line.
    const frame = /waiting for forged-1m \(1st in line; held by h{40,}…/;
    // Until the spinner shows; a dlock that cannot draw it in 10 s gets its SIGTERM anyway.
    const shown = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      terminal.child.stdout.on('data', () => frame.test(terminal.seen()) && (clearTimeout(timer), resolve(true)));
    });
    await writeFile(join(dir, 'go'), 'go\n');
    const watchdog = setTimeout(() => process.kill(Number(readFileSync(join(dir, 'pid'), 'utf8')), 'SIGKILL'), 10_000);
    await terminal.result;
    clearTimeout(watchdog);
    const [rc, ms] = readFileSync(join(dir, 'result'), 'utf8').trim().split(' ').map(Number);
    expect(shown).toBe(true);
    expect(rc).toBe(143);
    expect(ms).toBeLessThan(1_000);
  }, 40_000);
});

describe('property: forged holders and hostile key names, through real processes', () => {
  test('status, status --json, the table, the busy line (text, json) and the spinner never print a raw control character', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        forgedHash,
        validKey,
        nastyText.filter((name) => name !== ''),
        async (hash, key, forgedName) => {
          const prefix = `prop${run++}:`;
          await forge(`${prefix}{${key}}`, hash);
          // A name no dlock would make (control characters in it), found only by SCAN.
          await forge(`${prefix}{${forgedName}}`, {
            owner: 'o',
            fence: '1',
            host: 'h',
            pid: '1',
            cmd: 'c',
            since_ms: String(Date.now()),
            ttl_ms: '600000',
          });
          const dir = tempDir();
          const common = '--redis "$REDIS" --prefix "$P"';
          const script = [
            `cd "$DIR"`,
            `{ "$DLOCK" status ${common} -- "$K" >status.out 2>status.err; echo $? >status.rc; } &`,
            `{ "$DLOCK" status --json ${common} -- "$K" >json.out 2>json.err; echo $? >json.rc; } &`,
            `{ "$DLOCK" status ${common} >list.out 2>list.err; echo $? >list.rc; } &`,
            `{ "$DLOCK" status --json ${common} >listjson.out 2>listjson.err; echo $? >listjson.rc; } &`,
            `{ "$DLOCK" run -n ${common} -- "$K" true >busy.out 2>busy.err; echo $? >busy.rc; } &`,
            `{ "$DLOCK" run -n --log-format json ${common} -- "$K" true >busyjson.out 2>busyjson.err; echo $? >busyjson.rc; } &`,
            `"$DLOCK" run -w 400ms ${common} -- "$K" true`,
            'wait',
          ].join('\n');
          writeFileSync(join(dir, 'sample.sh'), script);
          const spinner = (await inTerminal('sh "$DIR/sample.sh"', { DIR: dir, P: prefix, K: key }).result).replace(
            ORA_SEQUENCES,
            '',
          );
          const read = (name: string) => readFileSync(join(dir, name), 'utf8');
          const context = JSON.stringify({ hash, key, forgedName });
          expect(spinner, context).toMatch(/[\u2800-\u28ff] waiting for /);
          expect(unsafeIn(spinner), `spinner ${context}`).toBeUndefined();
          for (const name of ['status', 'json', 'list', 'listjson', 'busy', 'busyjson']) {
            expect(read(`${name}.rc`).trim(), `${name} ${read(`${name}.err`)} ${context}`).toBe(
              name.startsWith('busy') ? '75' : '0',
            );
            expect(unsafeIn(read(`${name}.out`)), `${name} ${context}`).toBeUndefined();
            expect(unsafeIn(read(`${name}.err`)), `${name} ${context}`).toBeUndefined();
          }
          // A forced_ms is what release --force leaves: a closed hold, nobody's (held false, closed).
          const closed = holderFromReply(flatReply(hash))!.forcedMs > 0;
          expect(JSON.parse(read('json.out'))).toMatchObject({
            key,
            held: !closed,
            ...(closed ? { closed: true } : {}),
          });
          const rows = JSON.parse(read('listjson.out')) as { key: string }[];
          expect(rows.map((row) => row.key)).toContain(key);
          expect(read('busy.err')).toMatch(/^dlock: [^\n]* is busy \([^\n]*\); not acquired\n$/);
          expect(JSON.parse(read('busyjson.err'))).toMatchObject({ event: 'busy', exit_code: 75 });
        },
      ),
      {
        numRuns: 25,
        // Each run starts processes: a failure is reported as found, not shrunk for minutes.
        endOnFailure: true,
        examples: [
          [
            {
              owner: 'o',
              fence: '\x1b[2J',
              host: 'a\u202eb\x9b1m',
              pid: 'abc',
              cmd: '\u2028\x00',
              since_ms: '1e300',
              ttl_ms: 'NaN',
            },
            '*?[\\',
            '\x1b[31m\u202e',
          ],
          [{ owner: '', host: 'x'.repeat(100_000), since_ms: '-5', ttl_ms: '' }, '$(id)`id`', '\x85\u2029'],
        ],
      },
    );
  }, 180_000);
});
