// Every kind of JSON dlock prints against the one schema (docs/reference/json-schema.json): the
// `--log-format json` events of runs that take, share, wait, are turned away, run past their
// bounds, lose the lock, leave background processes and fail; `status --json` of free, held,
// slotted, shared and all locks; `history --json` of those keys (acquired, released, busy, done,
// lost, forced). Checked by test/helpers/json-schema.ts, and by Python's jsonschema as well when
// it is installed.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { cleanEnv, dlock, type Result } from '../helpers/cli.js';
import { validate } from '../helpers/json-schema.js';
import { RedisServer } from '../../support/redis-server.mjs';
import { events, hold, tempDir, waitForDeath } from '../fixtures/observe.js';
import { useRedisServer } from '../helpers/server.js';

let redis: RedisServer;
useRedisServer((server) => (redis = server));

const SCHEMA_PATH = fileURLToPath(new URL('../../docs/reference/json-schema.json', import.meta.url));
const SCHEMA = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));

type Kind = 'event' | 'status' | 'history';
/** Every document seen, with the definition it must satisfy. */
const seen: { kind: Kind; value: unknown; from: string }[] = [];

const run = (args: string[], env: Record<string, string> = {}) =>
  dlock(['run', '--redis', redis.url, '--log-format', 'json', ...args], { env: cleanEnv(env) });

function keepEvents(result: Result, from: string): void {
  for (const event of events(result.stderr)) seen.push({ kind: 'event', value: event, from });
}

const KEYS = ['plain', 'failed', 'slotted', 'shared', 'held', 'bounded', 'beat', 'gone', 'bg', 'monthly', 'section'];

beforeAll(async () => {
  // Plain runs: exit 0 and 3; a slot; a shared hold; a usage error as an event.
  keepEvents(await run(['-v', 'plain', '--', 'true']), 'run plain');
  keepEvents(await run(['failed', '--', 'sh', '-c', 'exit 3']), 'run exit 3');
  keepEvents(await run(['-v', '--slots', '2', 'slotted', '--', 'true']), 'run --slots');
  keepEvents(await run(['-v', '--shared', 'shared', '--', 'true']), 'run --shared');
  keepEvents(await run(['--ttl', 'soon', 'plain', '--', 'true']), 'usage error');

  // Held by another: status while held, then -n (busy, with its holder), -E 0 -v, and a wait
  // that runs out on a pipe (waiting, wait-status, busy).
  const holder = hold('held', { redis: redis.url, flags: ['-t', '5s'] });
  await holder.child();
  for (const args of [['held'], []]) {
    const status = await dlock(['status', '--redis', redis.url, '--json', ...args]);
    seen.push({ kind: 'status', value: JSON.parse(status.stdout), from: `status ${args.join(' ')}` });
  }
  keepEvents(await run(['-n', 'held', '--', 'true']), 'busy -n');
  keepEvents(await run(['-n', '-E', '0', '-v', 'held', '--', 'true']), 'busy -E 0');
  keepEvents(await run(['-w', '300ms', 'held', '--', 'true']), 'wait runs out');
  holder.stop();
  keepEvents(await holder.result, 'holder');

  // Bounds: --max-hold and --heartbeat stop the command (exit 124).
  keepEvents(await run(['--max-hold', '300ms', '--kill-after', '100ms', 'bounded', '--', 'sleep', '10']), 'max-hold');
  keepEvents(await run(['--heartbeat', '300ms', 'beat', '--', 'sleep', '10']), 'heartbeat');

  // The lock deleted from outside: lost, signal, error, released with exit null and lost: true.
  const dir = tempDir();
  const losing = hold('gone', { redis: redis.url, dir, flags: ['-t', '1500ms'] });
  const { pid } = await losing.child();
  // After a renewal (a `renewed` event), so the sample has one.
  await losing.waitFor('"event":"renewed"');
  await redis.client().del('dlock:{gone}');
  await waitForDeath(pid);
  keepEvents(await losing.result, 'lost');

  // A background process left running (background, with the first process's exit, a number).
  keepEvents(await run(['-v', 'bg', '--', 'sh', '-c', 'sleep 0.3 & exit 3']), 'background');

  // --once-per: the second run is turned away (done).
  keepEvents(await run(['--once-per', '1h', 'monthly', '--', 'true']), 'once-per first');
  keepEvents(await run(['--once-per', '1h', 'monthly', '--', 'true']), 'once-per done');

  // A section: acquire --no-keeper, release --exit-status 5, then release --force of a new hold (forced).
  const taken = await dlock(['acquire', '--redis', redis.url, '--no-keeper', '--ttl', '30s', '--json', 'section']);
  const { token } = JSON.parse(taken.stdout) as { token: string };
  const released = await dlock(
    ['release', '--redis', redis.url, '--log-format', 'json', '-v', '--token', token, '--exit-status', '5', 'section'],
    { env: cleanEnv() },
  );
  keepEvents(released, 'release --exit-status');
  await dlock(['acquire', '--redis', redis.url, '--no-keeper', '--ttl', '30s', 'section']);
  keepEvents(
    await dlock(['release', '--redis', redis.url, '--log-format', 'json', '-v', '--force', 'section']),
    'release --force',
  );

  for (const key of ['plain', 'slotted', 'shared', 'nobody']) {
    const status = await dlock(['status', '--redis', redis.url, '--json', key]);
    seen.push({ kind: 'status', value: JSON.parse(status.stdout), from: `status ${key}` });
  }
  for (const key of KEYS) {
    const history = await dlock(['history', '--redis', redis.url, '--json', '--count', '50', key]);
    seen.push({ kind: 'history', value: JSON.parse(history.stdout), from: `history ${key}` });
  }
}, 120_000);

describe('every JSON output matches docs/reference/json-schema.json', () => {
  test('a good sample of all event kinds, status and history was produced', () => {
    const names = new Set(
      seen.filter((doc) => doc.kind === 'event').map((doc) => (doc.value as { event: string }).event),
    );
    for (const name of [
      'acquired',
      'renewed',
      'released',
      'busy',
      'waiting',
      'wait-status',
      'max-hold',
      'heartbeat-missed',
      'signal',
      'lost',
      'error',
      'background',
      'done',
    ])
      expect(names, name).toContain(name);
    const history = seen.filter((doc) => doc.kind === 'history').flatMap((doc) => doc.value as { event: string }[]);
    for (const name of ['acquired', 'released', 'busy', 'done', 'lost', 'forced'])
      expect(
        history.map((entry) => entry.event),
        name,
      ).toContain(name);
  });

  test('each document is valid', () => {
    const invalid = seen.flatMap(({ kind, value, from }) =>
      validate(SCHEMA, SCHEMA.$defs[kind], value).map((error) => `${from} (${kind}): ${error}`),
    );
    expect(invalid).toEqual([]);
    // And the checker does reject: the old history types (slot "-1", exit "0", pid "12").
    const old = [{ id: '1-0', time: null, time_ms: null, event: 'released', slot: '-1', exit: '0', pid: '12' }];
    expect(validate(SCHEMA, SCHEMA.$defs.history, old)).toHaveLength(3);
  });

  test('every *_ms but ts_ms is a whole number (no 6.98127399943769), at any depth', () => {
    const fractions: string[] = [];
    const walk = (value: unknown, path: string, from: string): void => {
      if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`, from));
      else if (value !== null && typeof value === 'object')
        for (const [name, field] of Object.entries(value)) {
          if (name.endsWith('_ms') && name !== 'ts_ms' && typeof field === 'number' && !Number.isInteger(field))
            fractions.push(`${from}: ${path}.${name} = ${field}`);
          walk(field, `${path}.${name}`, from);
        }
    };
    for (const { value, from } of seen) walk(value, '', from);
    expect(fractions).toEqual([]);
  });

  test('types chosen once: fence a decimal string, exit a number or null, slot a number or null', () => {
    const history = seen
      .filter((doc) => doc.kind === 'history')
      .flatMap((doc) => doc.value as Record<string, unknown>[]);
    const plain = history.find((entry) => entry.event === 'released' && entry.cmd === 'true');
    expect(plain).toMatchObject({ exit: 0, slot: null, fence: expect.stringMatching(/^\d+$/) });
    expect(history.find((entry) => entry.event === 'released' && entry.exit === 3)).toMatchObject({ slot: null });
    expect(history.find((entry) => entry.event === 'acquired' && entry.slot === 0)).toBeDefined();
    const lost = seen.find((doc) => doc.from === 'lost' && (doc.value as { event: string }).event === 'released');
    expect(lost?.value).toMatchObject({ exit: null, lost: true });
    const section = seen.find((doc) => doc.from === 'release --exit-status');
    expect(section?.value).toMatchObject({ event: 'released', exit: 5 });
  });

  test('every field of every event is named (typed) in the schema', () => {
    const named = new Set(Object.keys(SCHEMA.$defs.event.properties));
    const unnamed = seen
      .filter((doc) => doc.kind === 'event')
      .flatMap(({ value, from }) =>
        Object.keys(value as object)
          .filter((field) => !named.has(field))
          .map((field) => `${from}: ${field}`),
      );
    expect(unnamed).toEqual([]);
  });

  test("done (--once-per): until and until_ms, and the last run's pid a number, typed in the schema", () => {
    const done = seen.find((doc) => (doc.value as { event: string }).event === 'done')?.value as Record<string, any>;
    expect(done).toMatchObject({ until: expect.any(String), until_ms: expect.any(Number) });
    expect(done.until_ms).toBe(Date.parse(done.until));
    expect(done.last).toMatchObject({ pid: expect.any(Number), fence: expect.stringMatching(/^\d+$/) });
    expect(SCHEMA.$defs.event.properties.last.additionalProperties).toBe(false);
    const forged = { ...done, last: { ...done.last, pid: '' } };
    expect(validate(SCHEMA, SCHEMA.$defs.event, forged)).not.toEqual([]);
  });

  test("Python's jsonschema (a full implementation) agrees, when installed", (context) => {
    const probe = spawnSync('python3', ['-c', 'import jsonschema'], { encoding: 'utf8' });
    if (probe.status !== 0) return context.skip();
    const file = join(tempDir(), 'documents.json');
    writeFileSync(file, JSON.stringify(seen));
    const script = [
      'import json, sys, jsonschema',
      'schema = json.load(open(sys.argv[1]))',
      'jsonschema.Draft202012Validator.check_schema(schema)',
      'errors = []',
      'for doc in json.load(open(sys.argv[2])):',
      '    sub = dict(schema["$defs"][doc["kind"]], **{"$defs": schema["$defs"]})',
      '    for e in jsonschema.Draft202012Validator(sub).iter_errors(doc["value"]):',
      '        errors.append(doc["from"] + ": " + e.message)',
      'print(json.dumps(errors))',
    ].join('\n');
    const result = spawnSync('python3', ['-c', script, SCHEMA_PATH, file], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual([]);
  });
});
