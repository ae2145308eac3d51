// Connect to the configured instances and describe one lock on them.

import { randomBytes } from 'node:crypto';
import type { ConnectionConfig } from '../config.js';
import { UnavailableError } from '../errors.js';
import { lockKeys } from '../lock/keys.js';
import { disconnectAll, failureLine } from '../redis/client.js';
import { connectQuorum } from './connect.js';
import type { LockSet } from './lockset.js';
import { instanceTimeoutMs, quorumSize } from './quorum.js';

/** A fresh 128-bit owner token, hex. */
export function newOwnerToken(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Connect in parallel; fail with 69 (naming each failure) when too few answer for a quorum.
 * `ttlMs` is the lease length for run; status and release leave it out (and wait longer).
 */
export async function openLockSet(config: ConnectionConfig, key: string, ttlMs?: number, owner = newOwnerToken()): Promise<LockSet> {
  const total = config.targets.length;
  const timeoutMs = ttlMs ? instanceTimeoutMs(config.connectTimeoutMs, ttlMs, total) : config.connectTimeoutMs;
  const { instances, errors } = await connectQuorum(config.targets, config.connectTimeoutMs, ttlMs ? timeoutMs : undefined);
  if (instances.length < quorumSize(total)) {
    disconnectAll(instances);
    throw unavailable(total, errors);
  }
  return {
    instances,
    total,
    unreachable: errors,
    keys: lockKeys(config.prefix, key),
    owner,
    ttlMs: ttlMs ?? 0,
    timeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
  };
}

/** The 69 error: which instances failed and why (labels carry no passwords). */
export function unavailable(total: number, errors: string[]): UnavailableError {
  if (total === 1) return new UnavailableError(errors.length > 0 ? errors.map(failureLine).join('; ') : 'cannot reach redis');
  return new UnavailableError(
    `no quorum: ${quorumSize(total)} of ${total} Redis instances needed, ${errors.length} failed (${errors.join('; ')})`,
  );
}
