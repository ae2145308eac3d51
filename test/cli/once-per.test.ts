// --once-per (docs/guides/cron.md): three crontabs on hosts whose clocks are 2 s apart
// (libfaketime: `faketime -f +2s bin/dlock ...`) each fire the job once per slot; the job runs
// exactly once per slot, because the window is measured on the server's clock from the start of
// the run that succeeded. A failed run sets nothing: the next host retries in the same slot.

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanEnv, dlock, DLOCK, type Result } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** Each host's clock offset: the dlock process (and its job) runs under `faketime -f <offset>`. */
const HOSTS = [
  { name: 'ahead', offsetMs: 2000, faketime: '+2s' },
  { name: 'exact', offsetMs: 0, faketime: '+0s' },
  { name: 'behind', offsetMs: -2000, faketime: '-2s' },
];

/**
 * A slot of the simulated crontab, and the --once-per window (as 4m in a crontab firing every
 * 5 minutes): longer than the spread of one slot's firings (4 s: the window of the first host's
 * success must cover the last host's firing), shorter than the gap from the exact host's
 * success in one slot to the first firing of the next (slot − 2 s = 7 s); 5.5 s leaves 1.5 s on
 * either side for start-ups on a loaded machine (4.5 s once let a run 4.6 s late through).
 */
const SLOT_MS = 9000;
const WINDOW = '5500ms';

/** The job: note (slot, host, the host's clock in ms) and exit with the code the file `fail` names for this host and slot. */
function jobScript(dir: string): string {
  const path = join(dir, 'job.sh');
  writeFileSync(
    path,
    `#!/bin/sh\necho "$1 $2 $(date +%s%3N)" >> ${dir}/ran\nif grep -qx "$1 $2" ${dir}/fail 2>/dev/null; then exit 1; fi\nexit 0\n`,
    { mode: 0o755 },
  );
  writeFileSync(join(dir, 'fail'), '');
  return path;
}

/** `dlock run -n -E 3 --once-per` as a crontab line on a host with a skewed clock. */
function fire(
  job: string,
  host: (typeof HOSTS)[number],
  slot: number,
): Promise<Result & { host: string; slot: number }> {
  const args = [
    '-f',
    host.faketime,
    DLOCK,
    'run',
    '--redis',
    redis.url,
    '-n',
    '-E',
    '3',
    '--once-per',
    WINDOW,
    'cron-job',
    '--',
    job,
    String(slot),
    host.name,
  ];
  return new Promise((resolve) => {
    const child = spawn('faketime', args, { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, host: host.name, slot }));
  });
}

describe('three hosts, clocks ±2 s apart, each firing the job once per slot', () => {
  test('faketime offsets the clock of node (and of the job)', () => {
    const real = Date.now();
    const ahead = Number(
      execFileSync('faketime', ['-f', '+2s', process.execPath, '-e', 'process.stdout.write(String(Date.now()))'], {
        encoding: 'utf8',
      }),
    );
    expect(ahead - real).toBeGreaterThan(1500);
    expect(ahead - real).toBeLessThan(3500);
  });

  test('the job runs exactly once per slot; a failed run lets the next host retry in the same slot', async () => {
    const dir = tempDir();
    const job = jobScript(dir);
    // Slot 1: the host whose clock is ahead fires first, and its run fails.
    writeFileSync(join(dir, 'fail'), '1 ahead\n');
    const t0 = Date.now() + 2500;
    const fired: Promise<Result & { host: string; slot: number }>[] = [];
    const timers: NodeJS.Timeout[] = [];
    for (let slot = 0; slot < 3; slot++) {
      for (const host of HOSTS) {
        // Each host's cron fires when its own clock reads the slot's start.
        const at = t0 + slot * SLOT_MS - host.offsetMs;
        fired.push(
          new Promise((resolve) => timers.push(setTimeout(() => resolve(fire(job, host, slot)), at - Date.now()))),
        );
      }
    }
    const results = await Promise.all(fired);
    timers.forEach(clearTimeout);

    const codes = Object.fromEntries(results.map((r) => [`${r.slot} ${r.host}`, r.code]));
    expect(codes).toEqual({
      '0 ahead': 0,
      '0 exact': 3,
      '0 behind': 3,
      '1 ahead': 1,
      '1 exact': 0,
      '1 behind': 3,
      '2 ahead': 0,
      '2 exact': 3,
      '2 behind': 3,
    });
    const ran = readFileSync(join(dir, 'ran'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' '));
    expect(ran.map(([slot, host]) => `${slot} ${host}`)).toEqual(['0 ahead', '1 ahead', '1 exact', '2 ahead']);
    // Each turned-away run said where and when it last succeeded, and until when it is done.
    for (const r of results.filter((result) => result.code === 3)) {
      expect(r.stderr).toMatch(
        new RegExp(
          `^dlock: cron-job is done until \\S+Z \\(--once-per 5\\.5s\\): it last succeeded at \\S+Z on ${hostname()} \\(pid \\d+\\), started \\S+Z, took \\d+ms; not run \\(server time\\)\\n$`,
        ),
      );
    }
    // The job saw its host's clock: the hosts really were 2 s apart.
    const clockOf = (slot: string, host: string) => Number(ran.find(([s, h]) => s === slot && h === host)![2]);
    const skew = clockOf('1', 'ahead') - clockOf('1', 'exact');
    // ahead fired 2 s (real) before exact, with its clock 2 s ahead: their clocks read about the same.
    expect(Math.abs(skew)).toBeLessThan(1500);
  });
});

test('"done until" never names a second already past: the mark ends at .752Z, the line says the next second', async () => {
  // Issue 31: the time was cut to the second ("until …:06Z" for a mark ending at …:06.752Z).
  const args = ['run', '--redis', redis.url, '--once-per', '20s', 'until-rounded'];
  expect((await dlock([...args, '--', 'true'])).code).toBe(0);
  const text = await dlock([...args, '--', 'true']);
  const json = await dlock([...args.slice(0, 3), '--log-format', 'json', ...args.slice(3), '--', 'true']);
  expect(text.code, text.stderr).toBe(75);
  const shown = Date.parse(/is done until (\S+Z) /.exec(text.stderr)![1]);
  const until = Date.parse(JSON.parse(json.stderr).until);
  expect(until % 1000, 'a mark ending on a whole second proves nothing: run again').not.toBe(0);
  expect(shown).toBe(Math.ceil(until / 1000) * 1000);
});

describe('a done mark no run set', () => {
  test('one that expires past any date (PX 9e15): still done, 75, one line naming the mark to delete', async () => {
    await redis.client().set('dlock:{far-done}:done', '{}', 'PX', 9_000_000_000_000_000);
    const args = ['run', '--redis', redis.url, '--once-per', '1h', 'far-done', '--', 'true'];
    const text = await dlock(args);
    expect(text.code, text.stderr).toBe(75);
    expect(text.stderr).toBe(
      'dlock: far-done is done until a time past any date (delete dlock:{far-done}:done to run again) ' +
        '(--once-per 1h): ' +
        'it last succeeded at an unknown time somewhere (the mark names no host); not run (server time)\n',
    );
    const json = await dlock([...args.slice(0, 3), '--log-format', 'json', ...args.slice(3)]);
    expect(json.code, json.stderr).toBe(75);
    expect(JSON.parse(json.stderr)).toMatchObject({ event: 'done', exit_code: 75, until: null, key: 'far-done' });
  });
});
