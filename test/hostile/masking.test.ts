// Every message that quotes an argument masks what may be a credential in it: a URL's
// password however the URL is mistyped, and the value of a --password=-like word. The table
// calls maskSecrets in-process; the rest spawns bin/dlock as a user runs it.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { maskSecrets } from '../../src/secrets.js';
import { cleanEnv, dlock } from '../helpers/cli.js';
import { ConnectionRecorder, expectOneError } from '../helpers/hostile.js';

const SECRET = 's3cret-Mq4';

describe('maskSecrets', () => {
  test.for([
    ['redis://:pw@h:1', 'redis://:***@h:1'],
    ['redis://me:pw@h', 'redis://me:***@h'],
    ['rediss://user:p@s:s@h/0', 'rediss://user:***@h/0'],
    ['redis:/:pw@127.0.0.1', 'redis:/:***@127.0.0.1'],
    ['redis::pw@h', 'redis::***@h'],
    [':pw@h', ':***@h'],
    // Found by test/hostile-input: "user:" reads as a scheme, and the user name was kept.
    ['user:Sx9Q:aaaa@127.0.0.1:6379', 'user:***@127.0.0.1:6379'],
    ["unknown option '--redis=redis:/:pw@h'", "unknown option '--redis=redis:/:***@h'"],
    ['"--redis=redis://u:pw@h" comes after', '"--redis=redis://u:***@h" comes after'],
    // A quoted argument is one word: a password with a blank in it is masked whole (issue 31).
    ['"--redis=redis://:sec ret@h:1" comes after', '"--redis=redis://:***@h:1" comes after'],
    ["unknown option '--redis=redis:/u:a b c@h'", "unknown option '--redis=redis:/u:***@h'"],
    ['--ttl: not a duration (got "redis://u:a \\" b@h")', '--ttl: not a duration (got "redis://u:***@h")'],
    // A blank in the password of a URL in running text (a ping's, a path's): masked whole.
    ['ping http://u:sec ret@h/x failed: timed out', 'ping http://u:***@h/x failed: timed out'],
    ['--textfile redis://:sec ret@h.prom: cannot', '--textfile redis://:***@h.prom: cannot'],
    ['redis://h:6379 is down; mail a@b', 'redis://h:6379 is down; mail a@b'],
    ['https://h/p?pw=v1&passwd=v2&db_pw=v3', 'https://h/p?pw=***&passwd=***&db_pw=***'],
    ['--password=pw', '--password=***'],
    ["'--redis-pass=pw'", "'--redis-pass=***'"],
    ['DLOCK_REDIS_PASSWORD=pw x', 'DLOCK_REDIS_PASSWORD=*** x'],
    ['--pw=pw@h', '--pw=***'],
    ['PGPASSWORD=pw REDISCLI_AUTH=pw', 'PGPASSWORD=*** REDISCLI_AUTH=***'],
    // A query value whose name looks secret (a monitor's ?token=), in a URL or a hook's command.
    ['ping https://hc/x/0?token=t0p&rid=1 failed', 'ping https://hc/x/0?token=***&rid=1 failed'],
    [
      'https://h/p?a=1&api_key=k&sig=s;X-Amz-Signature=v#f',
      'https://h/p?a=1&api_key=***&sig=***;X-Amz-Signature=***#f',
    ],
    ["curl 'https://u:pw@h/x?password=p w'", "curl 'https://u:***@h/x?password=***'"],
    // Not credentials: left as they are.
    ['https://h/p?rid=abc&plain=1', 'https://h/p?rid=abc&plain=1'],
    ['mail me@example.com', 'mail me@example.com'],
    ['--ttl=5s a=b k:v --author=me', '--ttl=5s a=b k:v --author=me'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
  ])('%s', ([text, shown]) => {
    expect(maskSecrets(text)).toBe(shown);
  });
});

describe('spawned: the password never reaches stderr', () => {
  let recorder: ConnectionRecorder;
  beforeAll(async () => {
    recorder = await ConnectionRecorder.start();
  });
  afterAll(async () => {
    await recorder.close();
  });

  const url = (scheme: string) => `${scheme}:${SECRET}@127.0.0.1:6379`;
  type Case = [string, () => string[], number, RegExp, Record<string, string>?];
  const cases: Case[] = [
    ['--redis=URL after the key', () => ['run', 'k', `--redis=${url('redis://')}`, '--', 'true'], 64, /after the key/],
    ['--password= after the key', () => ['run', 'mykey', `--password=${SECRET}`, '--', 'true'], 64, /after the key/],
    ['redis:/ in an unknown option', () => [`--redis=${url('redis:/')}`, 'run', 'k'], 64, /unknown option/],
    ['--password= as an unknown option', () => ['run', `--password=${SECRET}`, 'k'], 64, /unknown option/],
    ['a URL given to --ttl', () => ['run', '--ttl', url('rediss://user'), 'k', '--', 'true'], 64, /^dlock: --ttl: /],
    ['a URL in DLOCK_TTL', () => ['run', 'k', '--', 'true'], 64, /^dlock: DLOCK_TTL: /, { DLOCK_TTL: url('redis:') }],
    ['a URL as an unknown help topic', () => ['help', url('redis://')], 64, /unknown command/],
    ['a URL in a key with a blank', () => ['run', '--redis', recorder.url, `${url('redis://')} x`, 'true'], 64, /key/],
    ['a URL as the command', () => ['run', '--redis', recorder.url, 'k', '--', url('redis::')], 127, /not found/],
    ['json: after the key', () => ['run', '--log-format', 'json', 'k', `--redis=${url('redis:/')}`], 64, /after/],
  ];
  test.for(cases)('%s', async ([, args, code, message, env]) => {
    const result = await dlock(args(), { env: cleanEnv(env) });
    expectOneError(result, code, message);
    expect(result.stderr).toContain('***');
    expect(result.stderr + result.stdout).not.toContain(SECRET);
    expect(recorder.connections).toBe(0);
  });

  // Issue 31: a password with a blank in it was cut at the blank, and the two halves were shown.
  const SPACED = 'sec ret-Zq7';
  const spaced = (scheme: string) => `${scheme}:${SPACED}@127.0.0.1:1`;
  const spacedCases: Case[] = [
    [
      '--redis=URL after the key',
      () => ['run', 'k1', `--redis=${spaced('redis://')}`, '--', 'true'],
      64,
      /after the key/,
    ],
    ['redis:/ in an unknown option', () => [`--redis=${spaced('redis:/')}`, 'run', 'k'], 64, /unknown option/],
    ['a URL given to --ttl', () => ['run', '--ttl', spaced('rediss://user'), 'k', '--', 'true'], 64, /^dlock: --ttl: /],
    ['a URL given to -w', () => ['run', `-w${spaced('redis://')}`, 'k', '--', 'true'], 64, /^dlock: --wait: /],
    [
      'a URL in DLOCK_TTL',
      () => ['run', 'k', '--', 'true'],
      64,
      /^dlock: DLOCK_TTL: /,
      { DLOCK_TTL: spaced('redis:') },
    ],
    ['a URL as an unknown help topic', () => ['help', spaced('redis://')], 64, /unknown command/],
    ['json: after the key', () => ['run', '--log-format', 'json', 'k', `--redis=${spaced('redis:/')}`], 64, /after/],
    // The review of issue 31: a path or URL echoed by metrics was shown whole.
    ['a URL as --textfile', () => ['metrics', '--textfile', `${spaced('redis://')}.prom`], 73, /--textfile/],
    // Port 2: fetch refuses port 1 itself ("bad port"); this one is refused by the host.
    [
      'a URL as --push',
      () => ['metrics', '--push', `http://u:${SPACED}@127.0.0.1:2/x`],
      69,
      /^dlock: --push http:\/\/u:\*\*\*@127\.0\.0\.1:2\/x: cannot reach the Pushgateway \(connection refused\)$/,
    ],
  ];
  test.for(spacedCases)('a password with a blank: %s', async ([, args, code, message, env]) => {
    const result = await dlock(args(), { env: cleanEnv(env) });
    expectOneError(result, code, message);
    expect(result.stderr).toContain('***');
    expect(result.stderr + result.stdout).not.toMatch(/\bsec\b|ret-Zq7/);
    expect(recorder.connections).toBe(0);
  });
});
