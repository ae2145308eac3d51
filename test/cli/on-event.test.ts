// --on-event (docs/reference/options.md): a /bin/sh command per lock event, with the event in
// DLOCK_EVENT / DLOCK_EVENT_<FIELD> and its JSON on stdin, beside the lock: a hook that fails or
// hangs changes neither the exit status nor how long the lock is held. Real redis-server.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { events, hold, onlyEvent, tempDir } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

/** Each event's hook writes $OUT/<n>-<event>.env (its DLOCK_EVENT variables) and .json (its stdin). */
const RECORD =
  'n=$(date +%s%N); env | grep "^DLOCK_EVENT" | sort > "$OUT/$n-$DLOCK_EVENT.env"; cat > "$OUT/$n-$DLOCK_EVENT.json"';

const run = (key: string, flags: string[], command: string[], env: Record<string, string> = {}) =>
  dlock(['run', '--redis', redis.url, ...flags, key, '--', ...command], { env: cleanEnv(env) });

interface Seen {
  event: string;
  env: Record<string, string>;
  json: Record<string, unknown>;
}

/** What the hooks recorded in `dir`, in the order they ran. */
function seen(dir: string): Seen[] {
  const names = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort();
  return names.map((name) => {
    const base = join(dir, name.slice(0, -'.json'.length));
    const env = Object.fromEntries(
      readFileSync(`${base}.env`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    return { event: env.DLOCK_EVENT, env, json: JSON.parse(readFileSync(`${base}.json`, 'utf8')) };
  });
}

describe('every lock event, with its fields', () => {
  test("the hook's event is stderr's event: the same ts and ts_ms, in DLOCK_EVENT_* and on stdin", async () => {
    const out = tempDir();
    const result = await run('hook-ts', ['--on-event', RECORD, '--log-format', 'json'], ['true'], { OUT: out });
    expect(result.code).toBe(0);
    for (const name of ['acquired', 'released']) {
      const logged = onlyEvent(result.stderr, name) as unknown as Record<string, unknown>;
      const hook = seen(out).find(({ event }) => event === name)!;
      expect(hook.json, name).toEqual(logged);
      expect(hook.env.DLOCK_EVENT_TS_MS, name).toBe(String(logged.ts_ms));
      expect(hook.env.DLOCK_EVENT_TS, name).toBe(logged.ts);
    }
  });

  test('acquired and released (with the exit): fields in DLOCK_EVENT_*, the JSON on stdin', async () => {
    const out = tempDir();
    const result = await run('hook-ok', ['--on-event', RECORD, '--log-format', 'json', '-v'], ['sh', '-c', 'exit 3'], {
      OUT: out,
    });
    expect(result.code).toBe(3);
    const hooks = seen(out);
    expect(hooks.map(({ event }) => event).sort()).toEqual(['acquired', 'released']);
    const acquired = hooks.find(({ event }) => event === 'acquired')!;
    const logged = onlyEvent(result.stderr, 'acquired');
    expect(acquired.json).toMatchObject({ event: 'acquired', key: 'hook-ok', fence: logged.fence });
    expect(acquired.env).toMatchObject({
      DLOCK_EVENT: 'acquired',
      DLOCK_EVENT_KEY: 'hook-ok',
      DLOCK_EVENT_FENCE: logged.fence,
      DLOCK_EVENT_WAITED_MS: String(logged.waited_ms),
      DLOCK_EVENT_TS_MS: expect.stringMatching(/^\d+(\.\d+)?$/),
    });
    const released = hooks.find(({ event }) => event === 'released')!;
    expect(released.env).toMatchObject({
      DLOCK_EVENT_KEY: 'hook-ok',
      DLOCK_EVENT_RELEASED: 'true',
      DLOCK_EVENT_EXIT: '3',
    });
    expect(released.json).toMatchObject({ event: 'released', released: true, exit: 3 });
  });

  test('busy (also with -E 0 and --quiet), with the holder as JSON text; DLOCK_ON_EVENT works as --on-event', async () => {
    const holder = hold('hook-busy', { redis: redis.url });
    await holder.child();
    const out = tempDir();
    expect((await run('hook-busy', ['-n', '-q'], ['true'], { OUT: out, DLOCK_ON_EVENT: RECORD })).code).toBe(75);
    expect((await run('hook-busy', ['-n', '-E', '0', '--on-event', RECORD], ['true'], { OUT: out })).code).toBe(0);
    const hooks = seen(out);
    expect(hooks.map(({ event }) => event)).toEqual(['busy', 'busy']);
    expect(hooks[0].env).toMatchObject({ DLOCK_EVENT_KEY: 'hook-busy', DLOCK_EVENT_EXIT_CODE: '75' });
    expect(JSON.parse(hooks[0].env.DLOCK_EVENT_HOLDER)).toMatchObject({ pid: expect.any(Number) });
    // Issue 31: with -E 0 the same event had `holder: null` ("held by another owner").
    const { ttl_left_ms: _left, ...who } = JSON.parse(hooks[0].env.DLOCK_EVENT_HOLDER);
    expect(hooks[1].env).toMatchObject({ DLOCK_EVENT_EXIT_CODE: '0' });
    expect(JSON.parse(hooks[1].env.DLOCK_EVENT_HOLDER)).toMatchObject(who);
    expect(hooks[1].json.holder).toMatchObject(who);
    expect(hooks[1].env.DLOCK_EVENT_MESSAGE).toMatch(/^hook-busy is busy \(held by \S+ pid \d+, /);
    holder.stop();
    await holder.result;
  });

  test('lost: the hook sees it', async () => {
    const out = tempDir();
    const holder = hold('hook-lost', {
      redis: redis.url,
      flags: ['-t', '600ms', '--on-event', RECORD],
      env: cleanEnv({ OUT: out }),
    });
    await holder.child();
    await redis.client().del('dlock:{hook-lost}');
    expect((await holder.result).code).toBe(76);
    const names = seen(out).map(({ event }) => event);
    expect(names).toEqual(expect.arrayContaining(['acquired', 'lost', 'signal', 'released']));
  });

  test('a value is never read by a shell: a key with $(...) and ; reaches the hook as text', async () => {
    const out = tempDir();
    const key = 'k;$(touch$IFS$OUT/pwned)`id`"\'';
    const result = await run(key, ['--on-event', 'printf %s "$DLOCK_EVENT_KEY" > "$OUT/$DLOCK_EVENT"'], ['true'], {
      OUT: out,
    });
    expect(result.code).toBe(0);
    expect(readFileSync(join(out, 'acquired'), 'utf8')).toBe(key);
    expect(readdirSync(out).sort()).toEqual(['acquired', 'released']);
  });
});

describe("one run's hooks, in order", () => {
  test('a slow hook for acquired: released still comes after it, one hook at a time', async () => {
    const out = tempDir();
    const hook =
      'echo "$DLOCK_EVENT $(date +%s%N)" >> "$OUT/starts"; case $DLOCK_EVENT in acquired) sleep .3;; esac; ' +
      'echo "$DLOCK_EVENT $(date +%s%N)" >> "$OUT/o.log"';
    const result = await run('hook-order', ['--on-event', hook], ['true'], { OUT: out });
    expect(result.code).toBe(0);
    const lines = readFileSync(join(out, 'o.log'), 'utf8').trim().split('\n');
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['acquired', 'released']);
    // One at a time: released's hook started after acquired's had written its line.
    const starts = readFileSync(join(out, 'starts'), 'utf8').trim().split('\n');
    const releasedStart = Number(starts.find((line) => line.startsWith('released '))!.split(' ')[1]);
    expect(releasedStart).toBeGreaterThan(Number(lines[0].split(' ')[1]));
  });
});

describe('a hook never holds the job up', () => {
  test('a failing hook: one warning line each, the exit status unchanged', async () => {
    const result = await run('hook-fail', ['--on-event', 'exit 5'], ['sh', '-c', 'exit 2']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^dlock: --on-event hook for acquired failed: exit 5$/m);
    expect(result.stderr).toMatch(/^dlock: --on-event hook for released failed: exit 5$/m);
  });

  test('a hook that hangs: the lock is released at once, the next hook starts after --ping-timeout, dlock exits after it', async () => {
    const out = tempDir();
    const started = Date.now();
    const result = await run(
      'hook-hang',
      ['--on-event', 'echo $$ >> "$OUT/pids"; exec sleep 30', '--ping-timeout', '1s', '--log-format', 'json', '-v'],
      ['true'],
      { OUT: out },
    );
    const endedAt = Date.now();
    const tookMs = endedAt - started;
    expect(result.code).toBe(0);
    const released = onlyEvent(result.stderr, 'released');
    const acquired = onlyEvent(result.stderr, 'acquired');
    console.log(`hanging hook: held ${Math.round(released.ts_ms - acquired.ts_ms)}ms, dlock took ${tookMs}ms`);
    expect(released.ts_ms - acquired.ts_ms).toBeLessThan(500);
    // From the release to dlock's exit (its start-up left out: slow on a loaded machine): the bound and a margin.
    expect(endedAt - released.ts_ms).toBeLessThan(1_000 + 1_500);
    // Free for the next run at once, while the hooks still sleep.
    expect((await run('hook-hang', ['-n'], ['true'])).code).toBe(0);
    expect(events(result.stderr, 'hook-failed').map(({ message }) => message)).toEqual([
      // One at a time: acquired's hook is left running after its bound, and released's starts.
      expect.stringMatching(/^--on-event hook for acquired \(pid \d+\) still running after 1s; left running, the next/),
      expect.stringMatching(/^--on-event hook for released \(pid \d+\) still running at exit; left running$/),
    ]);
    for (const pid of readFileSync(join(out, 'pids'), 'utf8').trim().split('\n')) process.kill(Number(pid), 'SIGKILL');
  });
});
