// Where a command must go when "the client" is not one server: a Cluster's masters (SCAN),
// the master serving a lock's slot (WAIT), a second connection for SUBSCRIBE.

import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from './create.js';

export function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}

/** The connections that hold data: the client itself, or one per master of a Cluster. */
export function masterNodes(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/**
 * The connection to the master that serves `key`: on a Cluster, the node the client's slot
 * map names for the key's slot (the one its last write to that slot went through, after any
 * MOVED); otherwise the client itself.
 */
export function nodeForKey(client: RedisClient, key: string): Redis {
  if (!isCluster(client)) return client;
  const owner = client.slots[calculateSlot(key)]?.[0];
  const node = client.nodes('master').find(({ options }) => `${options.host}:${options.port}` === owner);
  if (!node) throw new Error(`no cluster node is known to serve slot ${calculateSlot(key)}`);
  return node;
}

/** A new, not yet connected client with the same target and options, for SUBSCRIBE. */
export function subscriberFor(client: RedisClient): RedisClient {
  return isCluster(client) ? client.duplicate([], { lazyConnect: true }) : client.duplicate({ lazyConnect: true });
}
