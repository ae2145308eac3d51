// The ioredis client for one target, not yet connected: a plain connection, the master a set
// of sentinels names, or a Cluster. All share the rules of client.ts: bounded connect, no
// offline queue, nothing retried behind dlock's back until the first connect succeeded.

import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { RedisTarget } from './target.js';
import { MAX_TIMER_MS } from '../../../clock.js';

export type RedisClient = Redis | Cluster;

/** Reconnect delay once connected: quick, so a restart or failover does not cost the lease. */
const reconnectRetryMs = (attempt: number) => Math.min(25 * attempt, 500);

export async function createClient(target: RedisTarget, timeoutMs: number): Promise<RedisClient> {
  const [{ default: Redis, Cluster }, { installReplyGuard }] = await Promise.all([
    import('ioredis'),
    import('./reply-guard.js'),
  ]);
  installReplyGuard();
  const common: RedisOptions = {
    // With a password, always name the user ("default" unless the URL says otherwise): a
    // server without a password then accepts it quietly instead of ioredis printing a warning.
    username: target.password !== undefined ? (target.username ?? 'default') : target.username,
    password: target.password,
    disableClientInfo: true,
    // The socket's own timer takes at most MAX_TIMER_MS; withTimeout bounds a longer one (src/clock.ts).
    connectTimeout: Math.min(timeoutMs, MAX_TIMER_MS),
    maxRetriesPerRequest: 0,
  };
  switch (target.kind) {
    case 'standalone':
      return new Redis({
        ...common,
        host: target.host,
        port: target.port,
        db: target.db,
        // Verification is always on, whatever NODE_TLS_REJECT_UNAUTHORIZED says; a CA given
        // replaces the system's trust store.
        tls: target.tls ? { ...target.tlsFiles, rejectUnauthorized: true } : undefined,
        lazyConnect: true,
        enableReadyCheck: false,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
    case 'sentinel':
      return new Redis({
        ...common,
        sentinels: target.nodes,
        name: target.masterName,
        role: 'master',
        sentinelPassword: target.sentinelPassword,
        db: target.db,
        // One sentinel that hangs must leave time to ask the next one within the bound.
        sentinelCommandTimeout: Math.max(50, Math.floor(timeoutMs / (target.nodes.length + 1))),
        sentinelRetryStrategy: () => null,
        // dlock checks with INFO that the server it reaches is a master (server-check.ts), not
        // ioredis' ready check: that one skips the check and prints to stderr when the ACL
        // refuses INFO. A demoted one we still talk to answers READONLY, which reconnects
        // through the sentinels (and see sentinel-watch.ts for failovers).
        enableReadyCheck: false,
        reconnectOnError: (error) => error.message.startsWith('READONLY'),
        lazyConnect: true,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
    case 'cluster':
      return new Cluster(target.nodes, {
        redisOptions: common,
        lazyConnect: true,
        enableOfflineQueue: false,
        // Ready only once CLUSTER INFO says cluster_state:ok.
        enableReadyCheck: true,
        slotsRefreshTimeout: timeoutMs,
        clusterRetryStrategy: () => null,
      });
  }
}

/** After the first connect: a dropped connection is retried (commands sent meanwhile fail at once). */
export function keepReconnecting(client: RedisClient): void {
  if (client.isCluster) {
    (client as Cluster).options.clusterRetryStrategy = reconnectRetryMs;
  } else {
    (client as Redis).options.retryStrategy = reconnectRetryMs;
    (client as Redis).options.sentinelRetryStrategy = reconnectRetryMs;
  }
}
