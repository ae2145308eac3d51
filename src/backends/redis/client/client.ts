// One ioredis client per Redis instance (a server, a Sentinel-managed master, or a Cluster),
// set up so that nothing can hang: bounded connect, no offline queue, no command retried
// behind dlock's back.

import { longTimeout, now, withTimeout } from '../../../clock.js';
import { createClient, keepReconnecting, type RedisClient } from './create.js';
import { AnsweredError } from './describe.js';
import { isCluster } from './nodes.js';
import { checkServer, connectFailure } from './server-check.js';
import { stopWatching, watchFailovers } from './sentinel-watch.js';
import type { RedisTarget } from './target.js';

export type { RedisClient } from './create.js';
export { AnsweredError, describeError, isErrorReply, MalformedReplyError, UnreadReplyError } from './describe.js';
export { failureLine, failureText, retryableFailure, type MemberFailure } from '../../../backend/failure.js';
export { instanceFailure } from './failure.js';

export interface Instance {
  target: RedisTarget;
  client: RedisClient;
}

/** Connect to one instance within `timeoutMs`; afterwards the client reconnects on its own. */
export async function connect(target: RedisTarget, timeoutMs: number): Promise<Instance> {
  const client = await createClient(target, timeoutMs);
  // Later failures surface through the commands that hit them; the first connect's error
  // (ECONNREFUSED, a TLS alert...) says more than ioredis' "Connection is closed", so keep it.
  let connectError: unknown;
  client.on('error', (error) => (connectError ??= error));
  const started = now();
  try {
    // One round trip proves the whole path (TLS both ways, AUTH) and the kind of server before
    // any lock work, so a bad certificate, password or a replica is reported as such and not
    // as a failed command. ioredis only reports a failed SELECT as an error event and goes on
    // in db 0: that is an error too.
    await withTimeout(
      client.connect().then(() => checkServer(client, target)),
      timeoutMs,
    );
    if (connectError) throw connectError;
  } catch (error) {
    const status = client.status;
    client.disconnect();
    // The server's own answer (a replica, a sentinel) says more than the connection's end.
    const cause = error instanceof AnsweredError ? error : (connectError ?? error);
    throw await connectFailure(target, cause, status, timeoutMs - (now() - started));
  }
  // From here on a dropped connection is retried quickly (a restarting Redis must not lose a
  // lease that is still valid); commands sent while it is down fail at once.
  keepReconnecting(client);
  if (target.kind === 'sentinel' && !isCluster(client)) await watchFailovers(client, target);
  return { target, client };
}

export function disconnectAll(instances: Instance[]): void {
  for (const { client } of instances) {
    client.disconnect();
    if (!isCluster(client)) stopWatching(client);
  }
}

/**
 * Resolves when the client is connected again, or after `timeoutMs`. For a reader that just got
 * an UnreadReplyError (reply-guard.ts closed the connection): waiting here keeps the next read
 * from failing "not connected" while the client reconnects.
 */
export function reconnected(client: RedisClient, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      timer.clear();
      client.off('ready', done);
      resolve();
    };
    const timer = longTimeout(done, timeoutMs);
    client.once('ready', done);
  });
}
