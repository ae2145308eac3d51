// Connect to the configured instances and describe one lock on them.

import { isIP } from 'node:net';
import { newOwnerToken } from '../../backend/owner.js';
import type { RedisConnection } from './connection.js';
import { UsageError } from '../../errors.js';
import { unavailable } from '../../backend/failure.js';
import { lockKeys } from './lock/keys.js';
import type { HoldMode } from '../../backend/mode.js';
import { describeError, disconnectAll } from './client/client.js';
import { resolveHosts } from './client/resolve.js';
import type { RedisTarget } from './client/target.js';
import { now, TimeoutError } from '../../clock.js';
import { connectQuorum } from './connect.js';
import { findDuplicate } from './duplicates.js';
import type { LockSet } from './lockset.js';
import { strategyOf } from './strategy.js';
import { quorumSize } from './quorum.js';
import { instanceTimeoutMs } from '../../timing.js';

/**
 * Connect in parallel; fail with 69 (naming each failure) when too few answer for a quorum.
 * `ttlMs` is the lease length for run; status and release leave it out (and wait longer).
 */
export async function openLockSet(
  config: RedisConnection,
  key: string,
  ttlMs?: number,
  owner = newOwnerToken(),
  mode: HoldMode = { kind: 'exclusive' },
): Promise<LockSet> {
  const total = config.targets.length;
  // What the backend can do was decided once from the targets (config): the set carries it, and
  // everything after asks it (or the strategy it picks), never the number of instances.
  const caps = config.caps;
  const { quorum } = strategyOf({ caps });
  const started = now();
  const unresolved = quorum ? await refuseDuplicates(config.targets, config.connectTimeoutMs) : [];
  // Name lookups count toward the --connect-timeout bound (IP addresses need none).
  const looked = config.targets.some((target) => target.nodes.some((node) => !isIP(node.host)));
  const connectTimeoutMs =
    quorum && looked ? Math.max(1, config.connectTimeoutMs - Math.floor(now() - started)) : config.connectTimeoutMs;
  const timeoutMs = ttlMs ? instanceTimeoutMs(connectTimeoutMs, ttlMs, total) : connectTimeoutMs;
  const { instances, failures } = await connectQuorum(
    config.targets,
    connectTimeoutMs,
    ttlMs ? timeoutMs : undefined,
    unresolved,
  );
  if (instances.length < quorumSize(total)) {
    disconnectAll(instances);
    throw unavailable(caps, failures);
  }
  return {
    instances,
    total,
    unreachable: failures,
    keys: lockKeys(config.prefix, key),
    prefix: config.prefix,
    order: config.targets.map((target) => target.label),
    owner,
    ttlMs: ttlMs ?? 0,
    timeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    mode,
    caps,
  };
}

/**
 * Usage error (64) when two targets reach the same server: it would count twice toward a
 * majority. Host names are compared by every address they resolve to. Returns, per target,
 * why a one-server target cannot be reached when its host did not resolve (that is 69, later).
 */
async function refuseDuplicates(targets: RedisTarget[], timeoutMs: number): Promise<(string | undefined)[]> {
  const resolved = await resolveHosts(
    targets.flatMap((target) => target.nodes.map((node) => node.host)),
    timeoutMs,
  );
  const addresses = (host: string) => {
    const found = resolved.get(host);
    return Array.isArray(found) ? found : [host];
  };
  const duplicate = findDuplicate(
    targets.map((target) => ({
      ...target,
      nodes: target.nodes.map((node) => ({ addresses: addresses(node.host), port: node.port })),
    })),
  );
  if (duplicate) {
    throw new UsageError(
      `${duplicate.first} and ${duplicate.second} are the same Redis server (${duplicate.server}): it would count ` +
        'twice toward the Redlock majority; give each server once',
    );
  }
  return targets.map((target) => {
    const failed = target.kind === 'standalone' ? resolved.get(target.host) : undefined;
    if (!(failed instanceof Error)) return undefined;
    return failed instanceof TimeoutError ? `host lookup timed out after ${failed.ms}ms` : describeError(failed);
  });
}
