// describeError as a table: representative errors of the Redis client (ioredis' own texts,
// found with grep over node_modules/ioredis/built, and a real redis-parser protocol error)
// become dlock's phrases; none of the client's wording reaches the user.

import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';
import { AnsweredError, describeError, describeFailure } from '../../src/backends/redis/client/describe.js';
import { failureLine } from '../../src/backend/failure.js';
import { instanceFailure } from '../../src/backends/redis/client/failure.js';
import { TimeoutError } from '../../src/clock.js';

const require = createRequire(import.meta.url);
const { ReplyError } = require('ioredis') as { ReplyError: new (message: string) => Error };
const MaxRetriesPerRequestError = require('ioredis/built/errors/MaxRetriesPerRequestError.js').default as new (
  n: number,
) => Error;
const RedisParser = require('redis-parser') as new (options: object) => { execute(data: Buffer): void };

/** The fatal error ioredis reports when a server sends `bytes` (DataHandler adds "Please report this."). */
function protocolError(bytes: string | Buffer): Error {
  let fatal: Error | undefined;
  const parser = new RedisParser({
    returnReply: () => {},
    returnError: () => {},
    returnFatalError: (error: Error) => (fatal = error),
  });
  parser.execute(Buffer.from(bytes));
  fatal!.message += '. Please report this.';
  return fatal!;
}

function errno(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

const RAW_WORDING =
  /Please report|maxRetriesPerRequest|max retries per request|Connection is closed|isn't writeable|enableOfflineQueue|ReplyError|ParserError|script: [0-9a-f]{40}/i;

describe('describeError', () => {
  test.for<[string, unknown, string | RegExp]>([
    ['max retries (ioredis)', new MaxRetriesPerRequestError(0), 'connection lost'],
    ['"Connection is closed."', new Error('Connection is closed.'), 'not connected'],
    [
      'offline queue disabled',
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      'not connected',
    ],
    [
      'cluster offline queue',
      new Error("Cluster isn't ready and enableOfflineQueue options is false"),
      'the cluster is not connected',
    ],
    ['cluster ended', new Error('Cluster is ended.'), 'not connected'],
    ['aborted command', new Error('Command aborted due to connection close'), 'connection lost before the reply'],
    ['command timeout', new Error('Command timed out'), 'timed out'],
    [
      'queue state',
      new Error('Command queue state error. If you can reproduce this, please report it. Last reply: x'),
      /not a Redis server\?/,
    ],
    ['ready check', new Error('Ready check failed: NOAUTH Authentication required.'), /needs a password/],
    ['connect ETIMEDOUT (ioredis)', errno('ETIMEDOUT', 'connect ETIMEDOUT'), 'connect timed out'],
    ['refused', errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'), 'connection refused'],
    [
      'client certificate required (OpenSSL, Node)',
      errno('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'),
      'the server requires a client certificate (--tls-cert and --tls-key)',
    ],
    [
      'client certificate required (BoringSSL, the standalone executable)',
      errno('ERR_SSL_TLSV1_ALERT_CERTIFICATE_REQUIRED'),
      'the server requires a client certificate (--tls-cert and --tls-key)',
    ],
    ['dlock timeout', new TimeoutError(250), 'timed out after 250ms'],
    [
      'HTTP',
      protocolError('HTTP/1.1 400 Bad Request\r\n\r\n'),
      'not a Redis server: it answered HTTP (check the host and port)',
    ],
    [
      'SSH banner',
      protocolError('SSH-2.0-OpenSSH_9.6\r\n'),
      'not a Redis server: it answered "SSH-2.0-OpenSSH_9.6" (check the host and port)',
    ],
    [
      'garbage',
      protocolError(Buffer.from([0, 0xff, 0x22, 0x0a])),
      'not a Redis server: it answered "\\x00\\xff\\x22" (check the host and port)',
    ],
    [
      'TLS alert',
      protocolError(Buffer.from([0x15, 3, 1, 0, 2, 2, 0x46])),
      'a TLS port answered (use rediss:// for TLS)',
    ],
    [
      'NOAUTH',
      new ReplyError('NOAUTH Authentication required.'),
      /^the server needs a password: put it in the URL .* or in DLOCK_REDIS_PASSWORD$/,
    ],
    [
      'WRONGPASS',
      new ReplyError('WRONGPASS invalid username-password pair or user is disabled.'),
      'authentication failed',
    ],
    [
      'NOPERM',
      new ReplyError("NOPERM User dlock has no permissions to run the 'del' command"),
      "permission denied by the server's ACL: User dlock has no permissions to run the 'del' command",
    ],
    [
      'READONLY in a script',
      new ReplyError(
        "READONLY You can't write against a read only replica. script: 8b5dbf91a5b3760461428c52f06761f6122e5f48, on @user_script:10.",
      ),
      'the server is a read-only replica (READONLY)',
    ],
    [
      'other reply',
      new ReplyError('ERR something odd script: 8b5dbf91a5b3760461428c52f06761f6122e5f48, on @user_script:2.'),
      'the server answered: ERR something odd',
    ],
    [
      'sentinels: plain Redis',
      new Error(
        "All sentinels are unreachable and retry is disabled. Last error: ERR unknown command 'sentinel', with args beginning with: 'get-master-addr-by-name' 'm' ",
      ),
      /^a Redis server answered, not a sentinel/,
    ],
    [
      'sentinels: closed',
      new Error('All sentinels are unreachable and retry is disabled. Last error: Connection is closed.'),
      'no sentinel answered',
    ],
    [
      'cluster',
      Object.assign(new Error('None of startup nodes is available'), {
        lastNodeError: new Error('Connection is closed.'),
      }),
      'no cluster node answered',
    ],
    [
      'redirections',
      new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'),
      'too many cluster redirections (not connected)',
    ],
    ['an unknown client error', new Error('Something new in ioredis'), 'Redis client error: Something new in ioredis'],
    [
      'answered',
      new AnsweredError('a read-only replica: give the master URL'),
      'a read-only replica: give the master URL',
    ],
  ])('%s', ([, error, expected]) => {
    const reason = describeError(error);
    if (typeof expected === 'string') expect(reason).toBe(expected);
    else expect(reason).toMatch(expected);
    expect(reason).not.toMatch(RAW_WORDING);
    expect(reason).not.toContain('\n');
  });
});

describe('the error line for one instance', () => {
  test('a server that did not answer: "cannot reach"; one that answered: its URL and the reason', () => {
    expect(failureLine(instanceFailure('redis://h:1', errno('ECONNREFUSED')))).toBe(
      'cannot reach redis://h:1: connection refused',
    );
    expect(failureLine(instanceFailure('redis://h:1', new AnsweredError('a read-only replica')))).toBe(
      'redis://h:1: a read-only replica',
    );
  });

  test('answered and credential failures end a wait; a refused connection does not', () => {
    expect(describeFailure(new AnsweredError('not a Redis server')).permanent).toBe(true);
    expect(describeFailure(new ReplyError('NOAUTH Authentication required.')).permanent).toBe(true);
    expect(describeFailure(new ReplyError('WRONGPASS invalid username-password pair or user is disabled.'))).toEqual({
      reason: 'authentication failed',
      permanent: true,
      reached: false,
    });
    expect(describeFailure(errno('ECONNREFUSED')).permanent).toBe(false);
    expect(describeFailure(new ReplyError('READONLY no')).permanent).toBe(false);
  });
});
