// What kind of server a new connection reached, and what to tell the user when it is not the
// one dlock needs: a replica, a sentinel, something that is not Redis, a TLS port spoken to in
// plain text. Asked once at connect, so each is one clear line at once instead of a failed (and
// retried) lock command later.

import { UsageError, type DlockError } from '../../../errors.js';
import type { Redis } from 'ioredis';
import type { RedisClient } from './create.js';
import { AnsweredError, describeFailure } from './describe.js';
import { InstanceUnavailableError } from './failure.js';
import type { RedisTarget } from './target.js';
import { longTimeout } from '../../../clock.js';

/**
 * Prove the path (TLS both ways, AUTH, SELECT) with one round trip. For one server that is
 * HELLO 2 (RESP2 stays; every ACL allows HELLO), whose reply says whether it is a master; a
 * server without HELLO (Redis < 6, some proxies) gets a PING instead. Through Sentinel, ioredis'
 * ready check already insists on a master; a Cluster finds its masters itself.
 */
export async function checkServer(client: RedisClient, target: RedisTarget): Promise<void> {
  if (target.kind === 'sentinel') {
    // dlock's own master check (ioredis' ready check would skip it, printing its own warning,
    // when the ACL refuses INFO; refused, it is 69 "permission denied" here).
    const role = /^role:(\w+)/m.exec(await (client as Redis).info('replication'))?.[1];
    if (role !== undefined && role !== 'master')
      throw new Error(`the sentinels named a ${role}, not a master (a failover under way?)`);
    return;
  }
  if (target.kind !== 'standalone') {
    await client.ping();
    return;
  }
  let hello: unknown;
  try {
    hello = await client.call('HELLO', '2');
  } catch (error) {
    if (!/unknown command|wrong number of arguments/i.test(String((error as Error)?.message))) throw error;
    await client.ping();
    return;
  }
  const fields = new Map<string, string>();
  // Only text fields are read: a lying server's nested arrays are not turned into strings.
  if (Array.isArray(hello))
    for (let i = 0; i + 1 < hello.length; i += 2)
      if (typeof hello[i] === 'string') fields.set(hello[i], typeof hello[i + 1] === 'string' ? hello[i + 1] : '');
  if (fields.get('mode') === 'sentinel') {
    throw new AnsweredError(
      `a sentinel, not a Redis server: use redis+sentinel://${target.host}:${target.port}/<master name>`,
    );
  }
  const role = fields.get('role');
  if (role !== undefined && role !== 'master') {
    throw new AnsweredError(
      "a read-only replica: give the master's URL, or redis+sentinel://<sentinels>/<master name> to follow failovers",
    );
  }
}

/** The error for a failed connect: 64 for a database the server lacks, else 69 saying why. */
export async function connectFailure(
  target: RedisTarget,
  error: unknown,
  status: string,
  remainingMs: number,
): Promise<DlockError> {
  const message = String((error as Error)?.message ?? '');
  if (/DB index is out of range/i.test(message)) {
    return new UsageError(
      `${target.label}: the server has no database ${target.db} (its "databases" setting is lower): use a lower ` +
        'number in the URL',
    );
  }
  let failure = describeFailure(error);
  if (/^timed out/.test(failure.reason)) {
    // A TLS client that times out before the handshake ends often talks to a plain-text port.
    if (target.tls && status === 'connecting')
      failure.reason += ' in the TLS handshake (is this a plain-text port? use redis://)';
    else if (status !== 'connecting') failure.reason += ' waiting for an answer (a hung Redis, or not a Redis port?)';
  } else if (
    !target.tls &&
    target.kind === 'standalone' &&
    (failure.reason === 'connection reset' || failure.reason === 'not connected')
  ) {
    // Closed without a word: a TLS port does that to plain text, so ask it for a TLS handshake.
    // Anything else may be passing (a proxy whose backend is down): not final, "cannot reach".
    failure = (await answersTls(target, remainingMs))
      ? describeFailure(new AnsweredError('a TLS port: use rediss:// (and --tls-ca if its CA is private)'))
      : {
          ...failure,
          reason: 'the server closed the connection without answering (not a Redis server? check the host and port)',
        };
  }
  return new InstanceUnavailableError({ label: target.label, ...failure, errorReply: false });
}

/** Whether host:port completes a TLS handshake within `ms` (any certificate: this only asks "is it TLS?"). */
function answersTls(target: RedisTarget, ms: number): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(false);
  // getBuiltinModule, not import(): the bundle runs from a V8 code cache without an import() hook.
  const { connect } = process.getBuiltinModule('node:tls');
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port, rejectUnauthorized: false });
    const done = (isTls: boolean) => {
      timer.clear();
      socket.destroy();
      resolve(isTls);
    };
    const timer = longTimeout(() => done(false), ms);
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
  });
}
