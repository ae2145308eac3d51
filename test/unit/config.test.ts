// Options as commander hands them over + DLOCK_* env -> a validated RunConfig, as a table,
// without any server (docs/reference/options.md, keys; exit 64 for every bad input).

import { describe, expect, test } from 'vitest';
import {
  checkedReason,
  holdConfig,
  reasonOf,
  unholdConfig,
  untilTime,
  acquireConfig,
  connectionConfig,
  doctorConfig,
  historyConfig,
  holdMode,
  noDoctor,
  oncePer,
  releaseConfig,
  renewConfig,
  runConfig,
  statusConfig,
  syncReplicas,
  validateKey,
  type Env,
  type RawOptions,
  type RunConfig,
} from '../../src/config/index.js';
import { DlockError, UsageError } from '../../src/errors.js';
import { refusal } from '../../src/backend/index.js';
import type { RedisConnection } from '../../src/backends/redis/connection.js';

/** The run's config, with the Redis backend's own part of the connection (its targets) in view. */
const config = (raw: RawOptions = {}, env: Env = {}, key = 'job', command = ['./job.sh']) =>
  runConfig(key, command, raw, env) as RunConfig & RedisConnection;

/** The usage error runConfig throws (failing the test when it throws nothing or something else). */
function usageError(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as DlockError).exitCode).toBe(64);
    return error as UsageError;
  }
  throw new Error('expected a usage error, got none');
}

describe('runConfig defaults', () => {
  test('no flags, no env: the documented defaults', () => {
    expect(config()).toMatchObject({
      targets: [{ label: 'redis://127.0.0.1:6379', host: '127.0.0.1', port: 6379, db: 0, tls: false }],
      prefix: 'dlock:',
      connectTimeoutMs: 5_000,
      verbosity: 'normal',
      logFormat: 'text',
      key: 'job',
      command: ['./job.sh'],
      ttlMs: 30_000,
      waitMs: undefined,
      conflictExitCode: 75,
      onLost: 'term',
      killAfterMs: 10_000,
      syncReplicas: 0,
    });
    expect(config().targets[0].password).toBeUndefined();
  });
});

describe('flags and env', () => {
  // [what, raw flags, env, expected subset of the config]
  test.each<[string, RawOptions, Env, Partial<RunConfig>]>([
    ['--ttl', { ttl: '2s' }, {}, { ttlMs: 2_000 }],
    ['DLOCK_TTL', {}, { DLOCK_TTL: '1500ms' }, { ttlMs: 1_500 }],
    ['--ttl over DLOCK_TTL', { ttl: '2s' }, { DLOCK_TTL: '9s' }, { ttlMs: 2_000 }],
    ['bare number ttl is seconds', { ttl: '45' }, {}, { ttlMs: 45_000 }],
    ['--wait', { wait: '10m' }, {}, { waitMs: 600_000 }],
    ['--no-wait', { wait: false }, {}, { waitMs: 0 }],
    ['--wait 0 is one attempt', { wait: '0' }, {}, { waitMs: 0 }],
    ['DLOCK_WAIT', {}, { DLOCK_WAIT: '30s' }, { waitMs: 30_000 }],
    ['empty DLOCK_WAIT waits forever', {}, { DLOCK_WAIT: '' }, { waitMs: undefined }],
    ['--wait over DLOCK_WAIT', { wait: '1s' }, { DLOCK_WAIT: '30s' }, { waitMs: 1_000 }],
    ['--no-wait over DLOCK_WAIT', { wait: false }, { DLOCK_WAIT: '30s' }, { waitMs: 0 }],
    ['commander default wait=true means not given', { wait: true }, { DLOCK_WAIT: '3s' }, { waitMs: 3_000 }],
    ['--prefix', { prefix: 'app:' }, {}, { prefix: 'app:' }],
    ['DLOCK_PREFIX', {}, { DLOCK_PREFIX: 'env:' }, { prefix: 'env:' }],
    ['--prefix over DLOCK_PREFIX', { prefix: 'flag:' }, { DLOCK_PREFIX: 'env:' }, { prefix: 'flag:' }],
    ['empty prefix', { prefix: '' }, {}, { prefix: '' }],
    ['--log-format', { logFormat: 'json' }, {}, { logFormat: 'json' }],
    ['DLOCK_LOG_FORMAT', {}, { DLOCK_LOG_FORMAT: 'json' }, { logFormat: 'json' }],
    ['--log-format over DLOCK_LOG_FORMAT', { logFormat: 'text' }, { DLOCK_LOG_FORMAT: 'json' }, { logFormat: 'text' }],
    ['-q', { quiet: true }, {}, { verbosity: 'quiet' }],
    ['-v', { verbose: true }, {}, { verbosity: 'verbose' }],
    ['-E 0', { conflictExitCode: '0' }, {}, { conflictExitCode: 0 }],
    ['-E 255', { conflictExitCode: '255' }, {}, { conflictExitCode: 255 }],
    ['--on-lost kill', { onLost: 'kill' }, {}, { onLost: 'kill' }],
    ['--on-lost ignore', { onLost: 'ignore' }, {}, { onLost: 'ignore' }],
    ['--connect-timeout', { connectTimeout: '250ms' }, {}, { connectTimeoutMs: 250 }],
    ['--sync-replicas', { syncReplicas: '2' }, {}, { syncReplicas: 2 }],
    ['--kill-after under ttl/3', { ttl: '30s', killAfter: '2s' }, {}, { killAfterMs: 2_000 }],
    ['--kill-after at ttl/3', { ttl: '900ms', killAfter: '300ms' }, {}, { killAfterMs: 300 }],
    ['default kill-after capped at ttl/3', { ttl: '1s' }, {}, { killAfterMs: 333 }],
    ['kill-after cap follows DLOCK_TTL', {}, { DLOCK_TTL: '600ms' }, { killAfterMs: 200 }],
    ['--kill-after 0', { killAfter: '0' }, {}, { killAfterMs: 0 }],
    ['no --max-hold, no --heartbeat', {}, {}, { maxHoldMs: undefined, heartbeatMs: undefined }],
    ['--max-hold', { maxHold: '2h' }, {}, { maxHoldMs: 7_200_000 }],
    ['DLOCK_MAX_HOLD', {}, { DLOCK_MAX_HOLD: '90s' }, { maxHoldMs: 90_000 }],
    ['--max-hold over DLOCK_MAX_HOLD', { maxHold: '2s' }, { DLOCK_MAX_HOLD: '9s' }, { maxHoldMs: 2_000 }],
    ['empty DLOCK_MAX_HOLD is none', {}, { DLOCK_MAX_HOLD: '' }, { maxHoldMs: undefined }],
    ['--max-hold shorter than the default --kill-after', { maxHold: '2s' }, {}, { maxHoldMs: 2_000 }],
    ['--max-hold longer than --kill-after', { maxHold: '2s', killAfter: '1s' }, {}, { maxHoldMs: 2_000 }],
    ['--heartbeat', { heartbeat: '1s' }, {}, { heartbeatMs: 1_000 }],
    ['--heartbeat 100ms', { heartbeat: '100ms' }, {}, { heartbeatMs: 100 }],
    ['DLOCK_HEARTBEAT', {}, { DLOCK_HEARTBEAT: '5m' }, { heartbeatMs: 300_000 }],
    ['--heartbeat over DLOCK_HEARTBEAT', { heartbeat: '3s' }, { DLOCK_HEARTBEAT: '5m' }, { heartbeatMs: 3_000 }],
  ])('%s', (_what, raw, env, expected) => {
    expect(config(raw, env)).toMatchObject(expected);
  });

  test('DLOCK_REDIS_URL is a comma-separated list (blanks ignored)', () => {
    const { targets } = config(
      {},
      { DLOCK_REDIS_URL: 'redis://10.0.0.1:7000, redis://b.example:7001/2,,rediss://c:7002' },
    );
    expect(targets.map((t) => [t.host, t.port, t.db, t.tls])).toEqual([
      ['10.0.0.1', 7000, 0, false],
      ['b.example', 7001, 2, false],
      ['c', 7002, 0, true],
    ]);
  });

  test('--redis (repeatable) wins over DLOCK_REDIS_URL', () => {
    const { targets } = config(
      { redis: ['redis://a:1', 'redis://b:2', 'redis://c:3'] },
      { DLOCK_REDIS_URL: 'redis://env:9' },
    );
    expect(targets.map((t) => t.label)).toEqual(['redis://a:1', 'redis://b:2', 'redis://c:3']);
  });

  test('an empty --redis list falls back to DLOCK_REDIS_URL', () => {
    expect(config({ redis: [] }, { DLOCK_REDIS_URL: 'redis://env:9' }).targets.map((t) => t.label)).toEqual([
      'redis://env:9',
    ]);
  });

  test('user and password come from the URL; the label never shows the password', () => {
    const [target] = config({ redis: ['redis://alice:s%3Acret@db.local:6380/3'] }).targets;
    expect(target).toMatchObject({ username: 'alice', password: 's:cret', host: 'db.local', port: 6380, db: 3 });
    expect(target.label).toBe('redis://alice:***@db.local:6380/3');
    const [passwordOnly] = config({ redis: ['redis://:hunter2@h'] }).targets;
    expect(passwordOnly.password).toBe('hunter2');
    expect(passwordOnly.label).not.toContain('hunter2');
  });

  test('status and release share the connection options', () => {
    expect(connectionConfig({ prefix: 'x:', logFormat: 'json' }, { DLOCK_REDIS_URL: 'redis://h:1' })).toMatchObject({
      prefix: 'x:',
      logFormat: 'json',
      targets: [{ host: 'h', port: 1 }],
    });
  });
});

describe('usage errors (exit 64) name the option and show the bad value', () => {
  // [what, raw flags, env, message pattern]
  test.each<[string, RawOptions, Env, RegExp]>([
    ['bad --ttl', { ttl: 'soon' }, {}, /--ttl.*"soon"/],
    ['bad DLOCK_TTL', {}, { DLOCK_TTL: '5x' }, /DLOCK_TTL.*"5x"/],
    ['ttl 0', { ttl: '0' }, {}, /--ttl.*"0"/],
    ['ttl 0ms', { ttl: '0ms' }, {}, /--ttl.*"0ms"/],
    ['negative ttl', { ttl: '-5s' }, {}, /--ttl.*"-5s"/],
    ['ttl under 100ms', { ttl: '99ms' }, {}, /--ttl.*100ms.*"99ms"/],
    ['DLOCK_TTL under 100ms', {}, { DLOCK_TTL: '50ms' }, /DLOCK_TTL.*"50ms"/],
    ['bad --wait', { wait: '1y' }, {}, /--wait.*"1y"/],
    ['negative --wait', { wait: '-1s' }, {}, /--wait.*"-1s"/],
    ['bad DLOCK_WAIT', {}, { DLOCK_WAIT: 'never' }, /DLOCK_WAIT.*"never"/],
    ['bad --kill-after', { killAfter: 'later' }, {}, /--kill-after.*"later"/],
    ['--kill-after over ttl/3', { ttl: '900ms', killAfter: '301ms' }, {}, /--kill-after: .*300ms of 900ms.*"301ms"/],
    ['--max-hold 0', { maxHold: '0' }, {}, /--max-hold.*greater than zero.*"0"/],
    ['negative --max-hold', { maxHold: '-5s' }, {}, /--max-hold.*"-5s"/],
    ['bad --max-hold', { maxHold: 'soon' }, {}, /--max-hold.*"soon"/],
    ['bad DLOCK_MAX_HOLD', {}, { DLOCK_MAX_HOLD: '0s' }, /DLOCK_MAX_HOLD.*"0s"/],
    ['--max-hold equal to --kill-after', { maxHold: '5s', killAfter: '5s' }, {}, /--max-hold.*--kill-after.*"5s"/],
    ['--max-hold under --kill-after', { maxHold: '1s', killAfter: '2s' }, {}, /--max-hold.*--kill-after.*"1s"/],
    ['--heartbeat 0', { heartbeat: '0' }, {}, /--heartbeat.*"0"/],
    ['negative --heartbeat', { heartbeat: '-1s' }, {}, /--heartbeat.*"-1s"/],
    ['--heartbeat under 100ms', { heartbeat: '99ms' }, {}, /--heartbeat.*100ms.*"99ms"/],
    ['DLOCK_HEARTBEAT under 100ms', {}, { DLOCK_HEARTBEAT: '50ms' }, /DLOCK_HEARTBEAT.*"50ms"/],
    ['bad --connect-timeout', { connectTimeout: 'x' }, {}, /--connect-timeout.*"x"/],
    ['zero --connect-timeout', { connectTimeout: '0' }, {}, /--connect-timeout.*"0"/],
    ['-E not a number', { conflictExitCode: 'busy' }, {}, /--conflict-exit-code.*"busy"/],
    ['-E negative', { conflictExitCode: '-1' }, {}, /--conflict-exit-code.*"-1"/],
    ['-E over 255', { conflictExitCode: '256' }, {}, /--conflict-exit-code.*"256"/],
    ['-E fraction', { conflictExitCode: '1.5' }, {}, /--conflict-exit-code.*"1.5"/],
    ['bad --on-lost', { onLost: 'panic' }, {}, /--on-lost.*"panic"/],
    ['bad --sync-replicas', { syncReplicas: 'two' }, {}, /--sync-replicas.*"two"/],
    ['bad --log-format', { logFormat: 'xml' }, {}, /--log-format.*"xml"/],
    ['bad DLOCK_LOG_FORMAT', {}, { DLOCK_LOG_FORMAT: 'yaml' }, /DLOCK_LOG_FORMAT.*"yaml"/],
    ['prefix with a space', { prefix: 'a b' }, {}, /--prefix.*"a b"/],
    ['prefix with a brace', { prefix: 'a{' }, {}, /--prefix.*"a\{"/],
    ['DLOCK_PREFIX with a brace', {}, { DLOCK_PREFIX: '}' }, /DLOCK_PREFIX.*"\}"/],
    ['--redis not a URL', { redis: ['localhost'] }, {}, /--redis.*"localhost"/],
    [
      '--redis wrong scheme',
      { redis: ['http://127.0.0.1:6379'] },
      {},
      /--redis.*redis:\/\/.*"http:\/\/127.0.0.1:6379"/,
    ],
    ['--redis bad port', { redis: ['redis://127.0.0.1:99999'] }, {}, /--redis.*"redis:\/\/127.0.0.1:99999"/],
    ['--redis bad db', { redis: ['redis://127.0.0.1:6379/x'] }, {}, /--redis.*database/],
    ['--redis query string', { redis: ['redis://127.0.0.1:6379?db=1'] }, {}, /--redis/],
    [
      'bad DLOCK_REDIS_URL entry',
      {},
      { DLOCK_REDIS_URL: 'redis://ok:1,nope' },
      /DLOCK_REDIS_URL.*"redis:\/\/ok:1,nope"/,
    ],
    ['-q with -v', { quiet: true, verbose: true }, {}, /--quiet and --verbose/],
  ])('%s', (_what, raw, env, message) => {
    expect(usageError(() => config(raw, env)).message).toMatch(message);
  });

  test('a bad URL is shown without its password', () => {
    const error = usageError(() => config({ redis: ['redis://bob:hunter2@127.0.0.1:99999'] }));
    expect(error.message).toContain('bob:***@');
    expect(error.message).not.toContain('hunter2');
  });

  test('no command, or an empty one', () => {
    expect(usageError(() => config({}, {}, 'job', [])).message).toMatch(/no command/);
    expect(usageError(() => config({}, {}, 'job', [''])).message).toMatch(/no command/);
  });

  test('a bad key is reported before the command', () => {
    expect(usageError(() => config({}, {}, 'a b', [])).message).toMatch(/key/);
  });
});

describe('validateKey', () => {
  test.each([
    'a',
    'nightly-sync',
    'deploy/prod:eu.1',
    'ключ',
    '锁',
    '🔒',
    'a'.repeat(256),
    'é'.repeat(128), // 256 bytes
    '*?[]', // glob characters are fine: status escapes them for SCAN
  ])('accepts %j', (key) => {
    expect(validateKey(key)).toBe(key);
  });

  test.each([
    ['empty', ''],
    ['undefined', undefined],
    ['a space', 'a b'],
    ['leading space', ' a'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\nb'],
    ['a no-break space', 'a\u00a0b'],
    ['an ideographic space', 'a\u3000b'],
    ['a control character', 'a\u0007b'],
    ['DEL', 'a\u007fb'],
    ['a zero-width space', 'a\u200bb'],
    ['a lone surrogate', 'a\ud800b'],
    ['an opening brace', 'a{b'],
    ['a closing brace', 'a}b'],
    ['a hash tag', '{job}'],
    ['257 bytes', 'a'.repeat(257)],
    ['258 bytes of 2-byte characters', 'é'.repeat(129)],
  ])('rejects %s', (_what, key) => {
    const error = usageError(() => validateKey(key));
    expect(error.message).toMatch(/key/);
  });
});

const T = '0123456789abcdef0123456789abcdef';
const T2 = 'fedcba9876543210fedcba9876543210';
const QUORUM = { redis: ['redis://a:1', 'redis://b:1', 'redis://c:1'] };
/** Each command's config: the raw options and env -> what it decides (or the usage error it throws). */
const COMMANDS = {
  acquire: (raw: RawOptions, env: Env) => acquireConfig('k', raw, env),
  renew: (raw: RawOptions, env: Env) => renewConfig('k', raw, env),
  release: (raw: RawOptions, env: Env) => releaseConfig('k', raw, env),
  status: (raw: RawOptions, env: Env) => statusConfig('k', raw, env),
  history: (raw: RawOptions, env: Env) => historyConfig('k', raw, env),
  doctor: (raw: RawOptions, env: Env) => doctorConfig(raw, env),
};

describe("each command's config", () => {
  // [command, raw flags, env, expected subset]
  test.each<[keyof typeof COMMANDS, RawOptions, Env, Record<string, unknown>]>([
    ['renew', { token: T }, {}, { key: 'k', token: T }],
    ['renew', {}, { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { token: T }],
    ['renew', { token: T2 }, { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { token: T2 }],
    ['release', { token: T }, {}, { key: 'k', force: false, now: false, token: T, slot: undefined }],
    ['release', {}, { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { force: false, token: T }],
    ['release', { force: true }, { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { force: true, token: undefined }],
    ['release', { force: true, now: true, slot: '2' }, {}, { force: true, now: true, slot: 2 }],
    ['release', { force: true, slot: '0' }, {}, { slot: 0 }],
    // A nested section's release (DLOCK_NESTED is the token, DLOCK_KEY the key) releases nothing.
    ['release', {}, { DLOCK_KEY: 'k', DLOCK_TOKEN: T }, { nested: false }],
    ['release', {}, { DLOCK_KEY: 'k', DLOCK_TOKEN: T, DLOCK_NESTED: T }, { token: T, nested: true }],
    ['release', { token: T }, { DLOCK_KEY: 'k', DLOCK_NESTED: T }, { nested: true }],
    ['release', { token: T2 }, { DLOCK_KEY: 'k', DLOCK_TOKEN: T, DLOCK_NESTED: T }, { token: T2, nested: false }],
    ['release', { token: T }, { DLOCK_KEY: 'other', DLOCK_NESTED: T }, { nested: false }],
    ['release', { force: true }, { DLOCK_KEY: 'k', DLOCK_TOKEN: T, DLOCK_NESTED: T }, { force: true, nested: false }],
    // Several sections: the other keys' tokens in DLOCK_HELD (`key=token,fence,ttl_ms,slot`, read from the right).
    ['renew', {}, { DLOCK_KEY: 'other', DLOCK_TOKEN: T2, DLOCK_HELD: `k=${T},1,30000,` }, { token: T }],
    ['release', {}, { DLOCK_KEY: 'other', DLOCK_TOKEN: T2, DLOCK_HELD: `x=${T2},1,1, k=${T},3,,2` }, { token: T }],
    ['release', {}, { DLOCK_KEY: 'k', DLOCK_TOKEN: T2, DLOCK_HELD: `k=${T},1,1,` }, { token: T2 }],
    ['release', {}, { DLOCK_HELD: `k=${T},1,1, k=${T2},1,1,` }, { token: T }],
    ['release', {}, { DLOCK_HELD: `k=${T},1,1,\tk=1=,${T2},1,1,` }, { token: T }],
    ['release', {}, { DLOCK_HELD: `k=x=${T2},1,1, k,=${T2},2,3,4 k=${T},1,1,` }, { token: T }],
    ['release', {}, { DLOCK_KEY: 'other', DLOCK_HELD: `k=${T},1,1,`, DLOCK_NESTED: `${T2} ${T}` }, { nested: true }],
    ['release', {}, { DLOCK_KEY: 'other', DLOCK_HELD: `k=${T},1,1,`, DLOCK_NESTED: T2 }, { nested: false }],
    ['status', {}, {}, { key: 'k', json: false }],
    ['status', { json: true, prefix: 'app:' }, {}, { json: true, config: { prefix: 'app:' } }],
    ['history', {}, {}, { key: 'k', count: 20, json: false }],
    ['history', { count: '1000', json: true }, {}, { count: 1000, json: true }],
    ['doctor', {}, {}, { ttlMs: 30_000, json: false }],
    ['doctor', { json: true }, { DLOCK_TTL: '2m' }, { ttlMs: 120_000, json: true }],
    ['doctor', QUORUM, {}, { config: { caps: { history: false } } }],
    ['acquire', { maxHold: '2h', heartbeat: '1m' }, {}, { maxHoldMs: 7_200_000, heartbeatMs: 60_000 }],
    ['acquire', { keeper: false }, { DLOCK_MAX_HOLD: '1h' }, { maxHoldMs: undefined }],
  ])('%s %j %j', (command, raw, env, expected) => {
    expect(COMMANDS[command](raw, env)).toMatchObject(expected);
  });

  test('status without a key lists every lock', () => {
    expect(statusConfig(undefined, {}, {})).toMatchObject({ key: undefined });
  });

  // [command, raw flags, env, message pattern]
  test.each<[keyof typeof COMMANDS, RawOptions, Env, RegExp]>([
    [
      'renew',
      {},
      {},
      /^renew needs the owner token: --token, DLOCK_TOKEN with DLOCK_KEY=k, or a DLOCK_HELD entry for k \(as dlock acquire/,
    ],
    ['renew', {}, { DLOCK_TOKEN: T }, /^renew needs the owner token/],
    ['renew', {}, { DLOCK_KEY: 'other', DLOCK_TOKEN: T }, /^renew needs the owner token/],
    ['renew', { token: 'xyz' }, {}, /^--token: not an owner token .*\(got "xyz"\)$/],
    ['renew', {}, { DLOCK_KEY: 'k', DLOCK_TOKEN: 'nope' }, /^DLOCK_TOKEN: not an owner token/],
    // release's four rules: --force or a token, never both; --now and --slot only with --force.
    ['release', { force: true, token: T }, {}, /^--force and --token: choose one \(--force releases whoever/],
    ['release', { now: true, token: T }, {}, /^--now needs --force$/],
    ['release', { slot: '1', token: T }, {}, /^--slot needs --force \(your own release knows its slot\)$/],
    [
      'release',
      {},
      {},
      /^release needs the owner token: .*DLOCK_KEY=k, or a DLOCK_HELD entry for k .*run: dlock release --force k$/,
    ],
    ['release', {}, { DLOCK_KEY: 'other', DLOCK_TOKEN: T }, /^release needs the owner token/],
    // A malformed DLOCK_HELD entry gives no token: a bad token, a missing field, a key dlock refuses.
    ['release', {}, { DLOCK_HELD: `k=${T.slice(1)},1,1,` }, /^release needs the owner token/],
    ['release', {}, { DLOCK_HELD: `k=${T},1,1` }, /^release needs the owner token/],
    ['release', {}, { DLOCK_HELD: `k=${T},x,1,` }, /^release needs the owner token/],
    ['renew', {}, { DLOCK_HELD: `=${T},1,1, ,,,=, ${'x'.repeat(100_000)}` }, /^renew needs the owner token/],
    ['release', { force: true, slot: '-1' }, {}, /^--slot: expected an integer from 0 to 999/],
    ['release', { force: true, slot: '1000' }, {}, /^--slot: expected an integer from 0 to 999/],
    ['release', { token: 'xyz' }, {}, /^--token: not an owner token/],
    ['history', { count: '0' }, {}, /^--count: expected an integer from 1 to 1000 \(got "0"\)$/],
    ['history', { count: '1001' }, {}, /^--count: expected an integer from 1 to 1000/],
    ['history', QUORUM, {}, /^history needs one Redis .*Redlock quorum of 3: no history is kept$/],
    ['doctor', { ttl: '50ms' }, {}, /^--ttl: must be at least 100ms/],
    ['status', { quiet: true, verbose: true }, {}, /^--quiet and --verbose: choose one$/],
    ['acquire', { pid: '12', keeper: false }, {}, /^--pid and --no-keeper: choose one/],
    ['acquire', { maxHold: '1h', keeper: false }, {}, /^--max-hold and --no-keeper: choose one/],
    ['acquire', { heartbeat: '1m', keeper: false }, {}, /^--heartbeat and --no-keeper: choose one/],
    ['acquire', { maxHold: '0' }, {}, /^--max-hold: must be greater than zero/],
    ['acquire', { heartbeat: '10ms' }, {}, /^--heartbeat: must be at least 100ms/],
    ['acquire', { json: true, format: 'sh' }, {}, /^--json and --format sh: choose one$/],
    ['acquire', { conflictExitCode: '0' }, {}, /^--conflict-exit-code: not 0 for eval/],
  ])('%s %j %j is a usage error', (command, raw, env, message) => {
    expect(usageError(() => COMMANDS[command](raw, env)).message).toMatch(message);
  });

  test('doctor on a store without checks is a usage error worded from its capabilities', () => {
    // Every store today has doctor: the statement is made by hand, as another backend would make it.
    const caps = { ...connectionConfig({}, {}).caps, store: 'etcd', name: 'an etcd cluster of 3', doctor: false };
    const error = usageError(() => {
      throw noDoctor(caps);
    });
    expect(error.message).toBe('doctor has no checks for etcd (an etcd cluster of 3)');
  });

  test('--sync-replicas is refused where the store cannot wait for replicas, worded from its capabilities', () => {
    const redis = connectionConfig({}, {}).caps;
    const caps = { ...redis, name: 'an etcd cluster of 3', syncReplicas: false };
    expect(usageError(() => syncReplicas('1', caps)).message).toBe(
      '--sync-replicas needs a store that can wait for its replicas, not an etcd cluster of 3',
    );
    expect(syncReplicas(undefined, caps)).toBe(0);
    expect(syncReplicas('2', redis)).toBe(2);
  });

  test("a Redlock quorum refuses --shared, --slots, --once-per and history in the Redis backend's words", () => {
    const full = 'one Redis (a server, redis+sentinel:// or redis+cluster://)';
    const quorum = 'a Redlock quorum of 3';
    const bound = "a majority of each instance's holders cannot bound how many hold at once";
    expect(usageError(() => config({ ...QUORUM, slots: '2' })).message).toBe(
      `--slots needs ${full}, not ${quorum}: ${bound}`,
    );
    expect(usageError(() => config({ ...QUORUM, shared: true })).message).toBe(
      `--shared needs ${full}, not ${quorum}: ${bound}`,
    );
    expect(usageError(() => config({ ...QUORUM, oncePer: '1h' })).message).toBe(
      `--once-per needs ${full}, not ${quorum}: ` +
        'the done mark is written by the release, which may reach only some instances',
    );
    expect(usageError(() => historyConfig('k', QUORUM, {})).message).toBe(
      `history needs ${full}: with ${quorum}: no history is kept`,
    );
  });

  test('a store words its own refusals (Capabilities.refusals), and one that gives none is refused neutrally', () => {
    // Made by hand, as a store without these features states them (etcd: a line and doctor, nothing more).
    const redis = connectionConfig({}, {}).caps;
    const lacking = {
      ...redis,
      name: 'etcd',
      store: 'etcd',
      kinds: ['exclusive'] as const,
      history: false,
      oncePer: false,
      syncReplicas: false,
    };
    const etcd = {
      ...lacking,
      refusals: {
        kinds: 'is not built on etcd (one holder per name)',
        oncePer: 'is not built on etcd (no done mark)',
        history: 'is not built on etcd (no history is kept)',
        syncReplicas: 'is not for etcd (a write is committed on a quorum of members)',
      },
    };
    expect(usageError(() => holdMode({ slots: '2' }, etcd)).message).toBe(
      '--slots is not built on etcd (one holder per name)',
    );
    expect(usageError(() => holdMode({ shared: true }, etcd)).message).toBe(
      '--shared is not built on etcd (one holder per name)',
    );
    expect(usageError(() => oncePer('1h', etcd)).message).toBe('--once-per is not built on etcd (no done mark)');
    expect(usageError(() => syncReplicas('1', etcd)).message).toBe(
      '--sync-replicas is not for etcd (a write is committed on a quorum of members)',
    );
    expect(`history ${refusal(etcd, 'history')}`).toBe('history is not built on etcd (no history is kept)');
    const full = 'one Redis (a server, redis+sentinel:// or redis+cluster://)';
    expect(usageError(() => holdMode({ slots: '2' }, lacking)).message).toBe(`--slots needs ${full}, not etcd`);
    expect(usageError(() => oncePer('1h', lacking)).message).toBe(`--once-per needs ${full}, not etcd`);
    expect(holdMode({ slots: '1' }, etcd)).toEqual({ kind: 'exclusive' });
    expect(oncePer(undefined, etcd)).toBe(0);
  });

  test('a bad key is refused by every command that takes one', () => {
    for (const make of [renewConfig, releaseConfig, statusConfig, historyConfig]) {
      expect(usageError(() => make('a b', { token: T }, {})).message).toMatch(/^key: /);
    }
  });
});

describe('--reason, hold and unhold (config/reason.ts, config/hold.ts)', () => {
  const at = new Date(2026, 11, 7, 16, 0, 0); // 16:00 local
  test.each([
    ['release 4.2 freeze', 'release 4.2 freeze'],
    ['ü'.repeat(512), 'ü'.repeat(512)],
    ['🔒'.repeat(512), '🔒'.repeat(512)],
  ])('reason %#: kept as given', (text, kept) => expect(checkedReason('--reason', text)).toBe(kept));
  test.each([
    ['', /must not be empty/],
    ['   ', /must not be empty/],
    ['x'.repeat(513), /at most 512 characters \(got 513\)/],
    ['a\nb', /without control characters/],
    ['a\x1bb', /without control characters/],
    ['a\u202eb', /without control characters/],
    ['a\u2028b', /without control characters/],
  ])('reason %j: 64', (text, message) => {
    expect(usageError(() => checkedReason('--reason', text)).message).toMatch(message);
  });
  test('DLOCK_REASON is read for run; on a Redlock quorum the variable is left unused and the option refused', () => {
    const one = connectionConfig({}, {}).caps;
    expect(reasonOf({}, { DLOCK_REASON: 'ci' }, one)).toBe('ci');
    expect(reasonOf({ reason: 'opt' }, { DLOCK_REASON: 'ci' }, one)).toBe('opt');
    const quorum = connectionConfig({ redis: ['redis://a', 'redis://b', 'redis://c'] }, {}).caps;
    expect(reasonOf({}, { DLOCK_REASON: 'ci' }, quorum)).toBeUndefined();
    expect(usageError(() => reasonOf({ reason: 'x' }, {}, quorum)).message).toMatch(/^--reason needs one Redis/);
  });
  test.each([
    ['18:00', new Date(2026, 11, 7, 18, 0).getTime()],
    ['15:30', new Date(2026, 11, 8, 15, 30).getTime()],
    ['2026-12-24T18:00', new Date(2026, 11, 24, 18, 0).getTime()],
    ['2026-12-24T18:00:00Z', Date.UTC(2026, 11, 24, 18, 0)],
  ])('--until %s', (text, ms) => expect(untilTime(text, at)).toBe(ms));
  test.each([
    ['2026-12-07T15:00', /is in the past/],
    ['25:00', /not a time/],
    ['tomorrow', /not a time/],
    ['2028-01-01T00:00', /at most 366 days ahead/],
    ['2027-02-30T10:00', /not a date-time/],
    ['2027-04-31 10:00', /not a date-time/],
  ])('--until %s: 64', (text, message) => expect(usageError(() => untilTime(text, at)).message).toMatch(message));
  test('hold: --reason required; --for or --until; no wait unless --wait; exclusive, no keeper', () => {
    expect(usageError(() => holdConfig('k', {}, {})).message).toMatch(/^hold needs --reason/);
    expect(usageError(() => holdConfig('k', { reason: 'x', for: '1h', until: '18:00' }, {})).message).toBe(
      '--for and --until: choose one',
    );
    const forever = holdConfig('k', { reason: 'x', wait: true }, { DLOCK_WAIT: '5m' });
    expect(forever).toMatchObject({ forever: true, untilMs: undefined, waitMs: 0, keeper: false, reason: 'x' });
    const twoHours = holdConfig('k', { reason: 'x', for: '2h', wait: '10m' }, {});
    expect(twoHours).toMatchObject({ forever: false, ttlMs: 7_200_000, waitMs: 600_000 });
    const until = holdConfig('k', { reason: 'x', until: '18:00', wait: '5h' }, {}, at);
    // A wait never outlasts --until.
    expect(until).toMatchObject({ forever: false, untilMs: new Date(2026, 11, 7, 18).getTime(), waitMs: 7_200_000 });
    const quorum = { redis: ['redis://a', 'redis://b', 'redis://c'], reason: 'x' };
    expect(usageError(() => holdConfig('k', quorum, {})).message).toMatch(/^hold needs one Redis/);
    expect(usageError(() => unholdConfig('k', quorum, {})).message).toMatch(/^unhold needs one Redis/);
    expect(unholdConfig('k', { force: true }, {})).toMatchObject({ key: 'k', force: true });
  });
});
