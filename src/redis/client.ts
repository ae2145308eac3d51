// One ioredis connection per Redis instance, set up so that nothing can hang:
// bounded connect, no offline queue, no command retried behind dlock's back.

import type { Redis } from 'ioredis';
import { UnavailableError } from '../errors.js';
import { TimeoutError, withTimeout } from '../timeout.js';
import type { RedisTarget } from './url.js';

export interface Instance {
  target: RedisTarget;
  client: Redis;
}

/** A short reason for a connection or command failure, never containing a password. */
export function describeError(error: unknown): string {
  if (error instanceof TimeoutError) return error.message;
  const err = error as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connect timed out';
    case 'ECONNRESET':
      return 'connection reset';
  }
  const message = String(err?.message ?? error).split('\n')[0];
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message)) return 'authentication failed';
  return message.replace(/^ReplyError: /, '');
}

/** Connect to one instance within `timeoutMs`; afterwards the client reconnects on its own. */
export async function connect(target: RedisTarget, timeoutMs: number): Promise<Instance> {
  const { default: Redis } = await import('ioredis');
  const client = new Redis({
    host: target.host,
    port: target.port,
    username: target.username,
    password: target.password,
    db: target.db,
    tls: target.tls ? { servername: target.host } : undefined,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    enableReadyCheck: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Later failures surface through the commands that hit them; the first connect's error
  // (ECONNREFUSED, ...) says more than ioredis' "Connection is closed", so keep it.
  let connectError: unknown;
  client.on('error', (error) => (connectError ??= error));
  try {
    await withTimeout(client.connect(), timeoutMs);
  } catch (error) {
    client.disconnect();
    throw new UnavailableError(`cannot reach ${target.label}: ${describeError(connectError ?? error)}`);
  }
  // From here on a dropped connection is retried quickly (a restarting Redis must not lose a
  // lease that is still valid); commands sent while it is down fail at once.
  client.options.retryStrategy = (attempt: number) => Math.min(25 * attempt, 500);
  return { target, client };
}

/** Connect to every target in parallel; `errors` lists the ones that failed. */
export async function connectAll(
  targets: RedisTarget[],
  timeoutMs: number,
): Promise<{ instances: Instance[]; errors: string[] }> {
  const results = await Promise.allSettled(targets.map((target) => connect(target, timeoutMs)));
  const instances: Instance[] = [];
  const errors: string[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') instances.push(result.value);
    else errors.push((result.reason as Error).message.replace(/^cannot reach /, ''));
  }
  return { instances, errors };
}

export function disconnectAll(instances: Instance[]): void {
  for (const { client } of instances) client.disconnect();
}
