// Follow a Sentinel failover the moment it happens. Sentinel demotes an old master that is
// still up only when it next looks at it (up to 10s later); until then our connection would
// keep renewing a lock on a master nobody else uses. So listen for +switch-master on every
// listed sentinel and reconnect, which asks the sentinels for the new master.
// (ioredis' own failoverDetector does the same but prints the errors of sentinels that are down.)

import type { Redis } from 'ioredis';
import type { RedisTarget } from './target.js';

const watchers = new WeakMap<Redis, Redis[]>();

/** Subscribe to +switch-master on the target's sentinels; stops when the client ends. */
export async function watchFailovers(client: Redis, target: RedisTarget): Promise<void> {
  const { default: Redis } = await import('ioredis');
  const subscribers = target.nodes.map((node) => {
    const subscriber = new Redis({
      ...node,
      password: target.sentinelPassword,
      disableClientInfo: true,
      connectTimeout: client.options.connectTimeout,
      retryStrategy: (attempt: number) => Math.min(100 * attempt, 1_000),
      // The SUBSCRIBE waits for a sentinel that is down now, and is renewed after a reconnect.
      maxRetriesPerRequest: null,
    });
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, message: string) => {
      // "<master name> <old ip> <old port> <new ip> <new port>"
      if (message.split(' ')[0] === target.masterName && client.status === 'ready') client.disconnect(true);
    });
    subscriber.subscribe('+switch-master').catch(() => {});
    return subscriber;
  });
  watchers.set(client, subscribers);
  client.once('end', () => stopWatching(client));
}

export function stopWatching(client: Redis): void {
  for (const subscriber of watchers.get(client) ?? []) subscriber.disconnect();
  watchers.delete(client);
}
