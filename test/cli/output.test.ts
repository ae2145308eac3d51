// dlock's own output (issue 10): never cut on a pipe, never able to change what happens to the
// lock when stdout/stderr are closed or broken, and with --log-format json nothing but events.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanEnv, dlock, DLOCK, runShell, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { fitColumns, spinnerWanted, underCi } from '../../src/spinner.js';
import { childPid, events, HOLD, hold, isAlive, onlyEvent, spawnDlock, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const lockExists = async (key: string) => (await redis.client().exists(`dlock:{${key}}`)) === 1;

/** Run a shell script with $DLOCK and $REDIS set, as a user's shell would run dlock. */
function shell(script: string, env: Record<string, string> = {}): Promise<Result> {
  return runShell('sh', ['-c', script], cleanEnv({ DLOCK, REDIS: redis.url, ...env }));
}

/**
 * dlock with stdout and stderr on a pipe whose reader is already gone: every write fails with
 * EPIPE, deterministically (unlike `| true`, which may still be reading). SIGPIPE is reset to
 * its default first, as a shell leaves it.
 */
const BROKEN_PIPE = `import os, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
r, w = os.pipe()
os.close(r)
os.dup2(w, 1)
os.dup2(w, 2)
os.execv(sys.argv[1], sys.argv[1:])`;

function withBrokenPipe(args: string[]) {
  return spawn('python3', ['-c', BROKEN_PIPE, DLOCK, ...args], {
    env: cleanEnv(),
    stdio: ['ignore', 'ignore', 'ignore'],
  });
}

describe('nothing is cut on a pipe', () => {
  test('status --json with 2000 held locks through python3 -m json.tool is complete', async () => {
    const client = redis.client();
    const batch = client.pipeline();
    const since = Date.now();
    for (let i = 0; i < 2000; i++) {
      const lock = `bulk:{lock-${String(i).padStart(4, '0')}}`;
      batch.hset(lock, {
        owner: `owner-${i}`,
        fence: String(i + 1),
        host: `host-${i}`,
        pid: String(10_000 + i),
        cmd: `./job.sh --a-rather-long-argument ${i}`,
        since_ms: String(since),
        ttl_ms: '600000',
      });
      batch.pexpire(lock, 600_000);
    }
    await batch.exec();
    const dir = tempDir();
    const result = await shell(
      `{ "$DLOCK" status --json --prefix bulk: --redis "$REDIS"; echo $? >"$DIR/rc"; } | python3 -m json.tool`,
      { DIR: dir },
    );
    expect(result.code).toBe(0); // python's: the JSON parsed
    expect(readFileSync(join(dir, 'rc'), 'utf8').trim()).toBe('0');
    const list = JSON.parse(result.stdout) as { key: string; fence: string }[];
    expect(list).toHaveLength(2000);
    expect(list.at(-1)).toMatchObject({ key: 'lock-1999', fence: '2000' });
    expect(result.stdout.length).toBeGreaterThan(256 * 1024);
  });
});

describe('a closed or broken stdout/stderr never changes what happens to the lock', () => {
  // [how stdout/stderr are broken, in sh]
  test.for([
    ['2>&1 | true', (cmd: string) => `{ ${cmd} 2>&1; echo $? >"$DIR/rc"; } | true`],
    ['2>&-', (cmd: string) => `${cmd} 2>&-; echo $? >"$DIR/rc"`],
    ['>&- 2>&-', (cmd: string) => `${cmd} >&- 2>&-; echo $? >"$DIR/rc"`],
    ['2</dev/null (EBADF)', (cmd: string) => `${cmd} 2</dev/null; echo $? >"$DIR/rc"`],
  ] as const)('%s: the command runs, its exit code passes through, the lock is released', async ([name, wrap]) => {
    const key = `closed-${name.replace(/\W+/g, '-')}`;
    const dir = tempDir();
    // -v: dlock writes a line at every step, so each one meets the broken stream.
    const cmd = `"$DLOCK" run -v --redis "$REDIS" ${key} -- sh -c 'touch "$DIR/ran"; exit 7'`;
    await shell(wrap(cmd), { DIR: dir });
    expect(existsSync(join(dir, 'ran'))).toBe(true);
    expect(readFileSync(join(dir, 'rc'), 'utf8').trim()).toBe('7');
    expect(await lockExists(key)).toBe(false);
  });

  test('stdout and stderr on a pipe nobody reads (EPIPE on every write): same', async () => {
    const dir = tempDir();
    const child = withBrokenPipe([
      'run',
      '-v',
      '--log-format',
      'json',
      '--redis',
      redis.url,
      'closed-epipe',
      '--',
      'sh',
      '-c',
      `touch ${dir}/ran; exit 5`,
    ]);
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(5);
    expect(existsSync(join(dir, 'ran'))).toBe(true);
    expect(await lockExists('closed-epipe')).toBe(false);
  });

  test('a lock lost while stderr is broken still stops the command: 76, and the command is gone', async () => {
    const dir = tempDir();
    // 3s, not 600ms: a lease that short gives up by itself when a loaded machine stalls dlock for
    // ~150ms, and may then SIGKILL at once (no SIGTERM), unlike the loss of a removed key.
    const child = withBrokenPipe(['run', '-v', '--redis', redis.url, '-t', '3s', 'closed-lost', '--', HOLD, dir]);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const pid = await childPid(dir);
    await redis.client().del('dlock:{closed-lost}');
    expect(await exited).toBe(76);
    expect(isAlive(pid)).toBe(false);
    // hold.sh traps TERM: it got the SIGTERM of --on-lost term, not only the parent-death SIGKILL.
    expect(readFileSync(join(dir, 'signals'), 'utf8')).toBe('TERM\n');
  });

  test('the command gets the default SIGPIPE disposition: sh -c "yes | head -1" behaves', async () => {
    const result = await dlock(['run', '--redis', redis.url, 'sigpipe', '--', 'sh', '-c', 'yes | head -1']);
    expect(result).toMatchObject({ code: 0, stdout: 'y\n', stderr: '' });
  });
});

describe('--log-format json: every outcome is an event, and nothing else is on stderr', () => {
  const parseAll = (stderr: string) =>
    stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  test('busy with -n: one busy event naming the holder, with the exit code', async () => {
    const dir = tempDir();
    const holder = spawnDlock(['run', '--redis', redis.url, 'json-busy', '--', HOLD, dir]);
    const pid = await childPid(dir);
    const result = await dlock(['run', '-n', '--log-format', 'json', '--redis', redis.url, 'json-busy', '--', 'true']);
    expect(result.code).toBe(75);
    const lines = parseAll(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      event: 'busy',
      key: 'json-busy',
      exit_code: 75,
      holder: { pid: holder.process.pid, cmd: `${HOLD} ${dir}` },
    });
    expect(lines[0].message).toMatch(/^json-busy is busy \(held by .* pid \d+/);
    expect(typeof lines[0].ts_ms).toBe('number');
    expect(isAlive(pid)).toBe(true);
  });

  test('busy with -q still says who holds it; with -E 0 it says nothing unless -v', async () => {
    const dir = tempDir();
    const holder = spawnDlock(['run', '--redis', redis.url, 'quiet-busy', '--', HOLD, dir]);
    await childPid(dir);
    const quiet = await dlock(['run', '-n', '-q', '--redis', redis.url, 'quiet-busy', '--', 'true']);
    expect(quiet.code).toBe(75);
    expect(quiet.stderr).toMatch(
      new RegExp(`^dlock: quiet-busy is busy \\(held by .* pid ${holder.process.pid}, .*\\); not acquired\\n$`),
    );
    const quietJson = await dlock([
      'run',
      '-n',
      '-q',
      '--log-format',
      'json',
      '--redis',
      redis.url,
      'quiet-busy',
      '--',
      'true',
    ]);
    expect(parseAll(quietJson.stderr)).toMatchObject([{ event: 'busy', holder: { pid: holder.process.pid } }]);
    const skip = await dlock([
      'run',
      '-n',
      '-E',
      '0',
      '--log-format',
      'json',
      '--redis',
      redis.url,
      'quiet-busy',
      '--',
      'true',
    ]);
    expect(skip).toMatchObject({ code: 0, stderr: '' });
    const skipVerbose = await dlock([
      'run',
      '-n',
      '-E',
      '0',
      '-v',
      '--log-format',
      'json',
      '--redis',
      redis.url,
      'quiet-busy',
      '--',
      'true',
    ]);
    expect(skipVerbose.code).toBe(0);
    expect(parseAll(skipVerbose.stderr)).toMatchObject([{ event: 'busy', exit_code: 0 }]);
  });

  test('errors are "error" events with the exit code: Redis unreachable (69), command not found (127)', async () => {
    const unreachable = await dlock([
      'run',
      '--log-format',
      'json',
      '--redis',
      'redis://127.0.0.1:1',
      '--connect-timeout',
      '300ms',
      'json-err',
      '--',
      'true',
    ]);
    expect(unreachable.code).toBe(69);
    expect(parseAll(unreachable.stderr)).toMatchObject([{ event: 'error', exit_code: 69 }]);
    const missing = await dlock(['run', '--redis', redis.url, 'json-err', '--', 'no-such-command-here'], {
      env: cleanEnv({ DLOCK_LOG_FORMAT: 'json' }),
    });
    expect(missing.code).toBe(127);
    expect(parseAll(missing.stderr)).toMatchObject([
      { event: 'error', exit_code: 127, message: 'no-such-command-here: command not found' },
    ]);
  });

  test('usage errors: JSON once --log-format json has parsed, text when the format itself is bad', async () => {
    const badTtl = await dlock([
      'run',
      '--log-format',
      'json',
      '--ttl',
      'soon',
      '--redis',
      redis.url,
      'json-usage',
      '--',
      'true',
    ]);
    expect(badTtl.code).toBe(64);
    expect(parseAll(badTtl.stderr)).toMatchObject([
      { event: 'error', exit_code: 64, message: expect.stringContaining('--ttl') },
    ]);
    const unknown = await dlock(['status', '--bogus', '--log-format', 'json']);
    expect(unknown.code).toBe(64);
    expect(parseAll(unknown.stderr)).toMatchObject([
      { event: 'error', exit_code: 64, message: expect.stringContaining('--bogus') },
    ]);
    const badFormat = await dlock(['run', '--log-format', 'yaml', 'json-usage', '--', 'true']);
    expect(badFormat.code).toBe(64);
    expect(badFormat.stderr).toMatch(/^dlock: [^\n]*yaml[^\n]*\n$/);
  });

  test('a lost lock: lost, then the SIGTERM dlock sends (reason lost), released, error 76', async () => {
    const dir = tempDir();
    // 3s, not 600ms: a lease that short gives up by itself when a loaded machine stalls dlock for
    // ~150ms, and the events (lost "expiring", maybe a SIGKILL too) are then not those of a removed key.
    const holder = hold('json-lost', { redis: redis.url, dir, flags: ['-t', '3s'] });
    const pid = await childPid(dir);
    await redis.client().del('dlock:{json-lost}');
    const result = await holder.result;
    expect(result.code).toBe(76);
    const lines = parseAll(result.stderr);
    expect(lines.map((line) => line.event).filter((event) => event !== 'renewed')).toEqual([
      'acquired',
      'lost',
      'signal',
      'released',
      'error',
    ]);
    const lost = onlyEvent(result.stderr, 'lost');
    const signal = onlyEvent(result.stderr, 'signal');
    expect(signal).toMatchObject({ signal: 'SIGTERM', reason: 'lost', pid, key: 'json-lost' });
    // Sent as soon as the loss was seen (bounded by the events' own clocks), not at the next
    // renewal up to 1s later; the bound leaves room for a loaded machine descheduling dlock.
    expect(signal.ts_ms - lost.ts_ms).toBeGreaterThanOrEqual(0);
    expect(signal.ts_ms - lost.ts_ms).toBeLessThan(150);
    expect(onlyEvent(result.stderr, 'error')).toMatchObject({ exit_code: 76 });
  });

  test('a command that ignores SIGTERM gets SIGKILL after --kill-after (reason kill-after)', async () => {
    const dir = tempDir();
    const holder = hold('json-kill', {
      redis: redis.url,
      dir,
      flags: ['-t', '3s', '--kill-after', '300ms'],
      onSignal: 'ignore',
    });
    await childPid(dir);
    holder.process.kill('SIGTERM');
    const result = await holder.result;
    expect(result.code).toBe(137);
    const [term, kill] = events(result.stderr, 'signal');
    expect(term).toMatchObject({ signal: 'SIGTERM', reason: 'forwarded' });
    expect(kill).toMatchObject({ signal: 'SIGKILL', reason: 'kill-after' });
    expect(kill.ts_ms - term.ts_ms).toBeGreaterThanOrEqual(299);
    expect(kill.ts_ms - term.ts_ms).toBeLessThan(1_000);
    expect(() => parseAll(result.stderr)).not.toThrow();
  });

  test('release --force: a force-released event; status and release errors are events too', async () => {
    const dir = tempDir();
    // A 3s lease: the holder must still hold when the release's dlock has started on a loaded machine.
    const holder = spawnDlock(['run', '--redis', redis.url, '-t', '3s', 'json-force', '--', HOLD, dir]);
    await childPid(dir);
    const released = await dlock(['release', '--force', '--log-format', 'json', '--redis', redis.url, 'json-force']);
    expect(released.code).toBe(0);
    expect(released.stdout).toMatch(/^json-force: released the lock held by /);
    expect(parseAll(released.stderr)).toMatchObject([
      {
        event: 'force-released',
        key: 'json-force',
        holder: { pid: holder.process.pid },
        closed_for_ms: expect.any(Number),
      },
    ]);
    expect((await holder.result).code).toBe(76);
    const noForce = await dlock(['release', '--log-format', 'json', '--redis', redis.url, 'json-force']);
    expect(noForce.code).toBe(64);
    expect(parseAll(noForce.stderr)).toMatchObject([{ event: 'error', exit_code: 64 }]);
    const quiet = await dlock([
      'release',
      '--force',
      '-q',
      '--log-format',
      'json',
      '--redis',
      redis.url,
      'json-force-never-held',
    ]);
    expect(quiet).toMatchObject({ code: 1, stderr: '' });
    const status = await dlock([
      'status',
      '--log-format',
      'json',
      '--redis',
      'redis://127.0.0.1:1',
      '--connect-timeout',
      '300ms',
      'json-force',
    ]);
    expect(status.code).toBe(69);
    expect(status.stdout).toBe('');
    expect(parseAll(status.stderr)).toMatchObject([{ event: 'error', exit_code: 69 }]);
  });
});

describe('the spinner on a terminal: CI=false is not CI, NO_COLOR has no colour', () => {
  /** What dlock writes to a pseudo-terminal (script(1)) while it waits 400ms for a held lock. */
  let keys = 0;
  async function onTerminal(env: Record<string, string>, columns = 100): Promise<string> {
    const dir = tempDir();
    const key = `tty-wait-${keys++}`;
    const holder = spawnDlock(['run', '--redis', redis.url, key, '--', HOLD, dir]);
    await childPid(dir);
    const result = await shell(
      `script -qfec 'stty cols ${columns}; "$DLOCK" run -w 400ms --redis "$REDIS" ${key} -- true' /dev/null`,
      env,
    );
    writeFileSync(join(dir, 'stop'), '');
    await holder.result;
    expect(result.code).toBe(75);
    return result.stdout;
  }
  // ora's first frame, coloured or not, then the text.
  const spinnerFrame = /\u280b(\u001b\[39m)? waiting for tty-wait-\d+ \(1st in line; held by /;

  test('no CI: spinner, in colour', async () => {
    const seen = await onTerminal({});
    expect(seen).toMatch(spinnerFrame);
    expect(seen).toContain('\u001b[36m');
  });

  test.for(['false', '0', ''])('CI=%j: spinner', async (ci) => {
    expect(await onTerminal({ CI: ci })).toMatch(spinnerFrame);
  });

  test.for(['true', '1'])('CI=%j: no spinner; status lines as on a pipe, and the busy line', async (ci) => {
    const seen = await onTerminal({ CI: ci });
    expect(seen).not.toContain('\u280b');
    // The wait's start line, once the holder is read (if that came before the 400ms ran out).
    expect(seen.replace(/^dlock: waiting for tty-wait-\d+ \(1st in line; held by [^\n]*\)\r?\n/m, '')).not.toContain(
      'waiting for',
    );
    expect(seen).toMatch(/dlock: tty-wait-\d+ is busy/);
  });

  test('each frame fits the terminal (stty cols 60): the text is cut, never wrapped', async () => {
    const seen = await onTerminal({ NO_COLOR: '1' }, 60);
    expect(seen).toMatch(/\u280b waiting for tty-wait-\d+ /);
    // What is drawn between cursor moves, line clears, carriage returns and newlines: one frame each.
    const frames = seen.split(/\r|\n|\u001b\[[0-9;?]*[A-Za-z]/).filter((frame) => frame.includes('waiting for'));
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.filter((frame) => [...frame].length > 60)).toEqual([]);
    expect(frames.some((frame) => frame.endsWith('…'))).toBe(true);
  });

  test('NO_COLOR=1: spinner without colour', async () => {
    const seen = await onTerminal({ NO_COLOR: '1' });
    expect(seen).toMatch(spinnerFrame);
    expect(seen).not.toContain('\u001b[36m');
  });
});

describe('spinner decision', () => {
  test.for([
    [undefined, false],
    ['', false],
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['true', true],
    ['1', true],
    ['yes', true],
  ] as const)('CI=%j: under CI %s', ([ci, expected]) => {
    expect(underCi(ci === undefined ? {} : { CI: ci })).toBe(expected);
  });

  const tty = { isTTY: true, columns: 80 } as NodeJS.WriteStream;
  test.for([
    [{}, false, tty, true],
    [{ CI: 'false' }, false, tty, true],
    [{ CI: 'true' }, false, tty, false],
    [{}, true, tty, false],
    [{ TERM: 'dumb' }, false, tty, false],
    [{}, false, { isTTY: true, columns: 0 } as NodeJS.WriteStream, false],
    [{}, false, { isTTY: false } as NodeJS.WriteStream, false],
  ] as const)('%j, quiet %s, stream %j: spinner %s', ([env, quiet, stream, expected]) => {
    expect(spinnerWanted(env, quiet, stream)).toBe(expected);
  });
});

describe('the spinner text in the columns it has', () => {
  test.for([
    ['abcdef', 6, 'abcdef'],
    ['abcdefg', 6, 'abcde…'],
    ['中文中文', 8, '中文中文'],
    ['中文中文', 7, '中文中…'],
    ['😀😀😀', 5, '😀😀…'],
  ] as const)('%j in %d columns: %j', ([text, columns, fitted]) => {
    expect(fitColumns(text, columns)).toBe(fitted);
  });
});
