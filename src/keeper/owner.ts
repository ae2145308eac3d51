// Renew and release by the owner token alone, from any process (`dlock renew`, `dlock release`
// without --force): 0 done, 76 the lock was no longer this owner's, 69 too few instances
// answered to tell. Releasing first stops this token's keeper on this host, if one runs.

import type { ConnectionConfig } from '../config/index.js';
import { LockLostError, UnavailableError } from '../errors.js';
import { logUnannounced } from '../hold/release-report.js';
import { inspectOn } from '../lock/inspect.js';
import type { HoldMode } from '../lock/mode.js';
import type { Logger } from '../log.js';
import { extendAll } from '../lockset/extend.js';
import type { LockSet } from '../lockset/lockset.js';
import { openLockSet, unavailable } from '../lockset/open.js';
import { quorumSize } from '../lockset/quorum.js';
import { releaseAll, releaseFailures } from '../lockset/release.js';
import { disconnectAll, failureText, instanceFailure, retryableFailure } from '../redis/client.js';
import { now, sleep } from '../clock.js';
import { STOP_SIGNAL } from './protocol.js';
import { findKeeper, isRunning } from './runtime.js';

export async function releaseAsOwner(
  config: ConnectionConfig,
  key: string,
  token: string,
  log: Logger,
): Promise<number> {
  const set = await openLockSet(config, key, undefined, token);
  try {
    await stopKeeper(token, config.connectTimeoutMs + 1_000);
    // One instance records the release in the key's history (no command: no exit status).
    const releases = await releaseAll(set, set.total === 1 ? { record: { exitStatus: '', oncePerMs: 0 } } : {});
    const released = releases.filter(
      ({ outcome }) => outcome.kind === 'released' || outcome.kind === 'released-or-expired',
    ).length;
    const failures = [...releaseFailures(releases), ...set.unreachable];
    for (const failure of failures)
      log.warn(`${key} not released on ${failureText(failure)}`, {
        event: 'release-failed',
        key,
        instance: failure.label,
        error: failure.reason,
      });
    // Released, but the waiters were not told (no +publish): warned as `dlock run` does.
    logUnannounced(log, releases, key);
    if (released >= quorumSize(set.total)) {
      log.event('released', { key, released: true }, `released ${key}`);
      return 0;
    }
    if (released + failures.length >= quorumSize(set.total))
      throw unavailable(
        set.total,
        failures.map((f) => retryableFailure(f.label, f.reason)),
      );
    throw notOurs(key);
  } finally {
    disconnectAll(set.instances);
  }
}

/** Extend the lease by the lock's own TTL (its `ttl_ms`). */
export async function renewAsOwner(config: ConnectionConfig, key: string, token: string, log: Logger): Promise<number> {
  const opened = await openLockSet(config, key, undefined, token);
  try {
    const { ttlMs, mode } = await ownHold(opened, key, token);
    const set: LockSet = { ...opened, ttlMs, mode };
    const renewal = await extendAll(set, { givesUpAt: now() + config.connectTimeoutMs });
    if (renewal.kind === 'refused') throw notOurs(key);
    if (renewal.kind === 'failed') throw new UnavailableError(`could not renew ${key}: ${renewal.errors.join('; ')}`);
    log.event('renewed', { key, ttl_ms: ttlMs }, `renewed ${key} for ${ttlMs}ms`);
    return 0;
  } finally {
    disconnectAll(opened.instances);
  }
}

/**
 * The lease length the lock was taken with, from a quorum of instances where `token` holds it,
 * and how it holds (one holder of --slots/--shared renews its own lease).
 */
async function ownHold(set: LockSet, key: string, token: string): Promise<{ ttlMs: number; mode: HoldMode }> {
  const states = await Promise.allSettled(
    set.instances.map((instance) => inspectOn(instance, set.keys, set.timeoutMs)),
  );
  const ours = states.flatMap((s) => {
    const holder = s.status === 'fulfilled' ? s.value.holders.find((h) => h.owner === token) : undefined;
    return holder?.ttlMs && s.status === 'fulfilled' ? [{ ttlMs: holder.ttlMs, mode: s.value.mode }] : [];
  });
  const ttls = ours.map(({ ttlMs }) => ttlMs);
  const failures = [
    ...states.flatMap((s, i) =>
      s.status === 'rejected' ? [instanceFailure(set.instances[i].target.label, s.reason)] : [],
    ),
    ...set.unreachable,
  ];
  if (ttls.length >= quorumSize(set.total)) return { ttlMs: Math.max(...ttls), mode: ours[0].mode };
  if (ttls.length + failures.length >= quorumSize(set.total)) throw unavailable(set.total, failures);
  throw notOurs(key);
}

function notOurs(key: string): LockLostError {
  const error = new LockLostError(
    `${key} was no longer this owner's (it expired or was taken): the section ran unprotected at some point`,
  );
  error.event = 'not-ours';
  error.fields = { key };
  return error;
}

/** Tell this token's keeper on this host to stop renewing, and wait until it has (its pid file is gone). */
async function stopKeeper(token: string, boundMs: number): Promise<void> {
  const keeper = findKeeper(token);
  if (!keeper) return;
  try {
    process.kill(keeper.pid, STOP_SIGNAL);
  } catch {
    return;
  }
  const deadline = now() + boundMs;
  while (now() < deadline && isRunning(keeper.pid) && findKeeper(token)) await sleep(10);
}
