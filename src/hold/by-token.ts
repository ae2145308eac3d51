// Renew and release by the owner token alone, from any process (`dlock renew`, `dlock release`
// without --force): 0 done, 76 the lock was no longer this owner's, 69 too few instances
// answered to tell. The store's side is LockHandle.releaseByToken and renewByToken (../backend/backend.ts).

import type { ConnectionConfig } from '../config/index.js';
import { LockLostError, UnavailableError } from '../errors.js';
import type { Logger } from '../log.js';
import { exitFields } from '../untrusted.js';
import { failureText, openBackend, retryableFailure, unavailable } from '../backend/index.js';
import { logUnannounced } from './release-report.js';

/**
 * Release the lock `token` holds on `key`. `stopRenewing`, once the instances are reached and
 * before the release: whatever renews this token stops (its keeper on this host), unless it is
 * ending the section itself: then nothing is released here (0). `exitStatus`:
 * the section's ("0" … "255", or "unknown"), recorded in the history.
 */
export async function releaseAsOwner(
  config: ConnectionConfig,
  key: string,
  token: string,
  log: Logger,
  stopRenewing: () => Promise<{ stopped: true } | { stopped: false; ending: string }> = async () => ({
    stopped: true,
  }),
  exitStatus = 'unknown',
): Promise<number> {
  const backend = await openBackend(config);
  try {
    const lock = backend.lock(key, { owner: token });
    const stop = await stopRenewing();
    if (!stop.stopped) {
      // Its keeper is ending the section itself (a bound, a lost lock, a signal: a trap on EXIT runs
      // then): it releases the lock and records how the section ended; this release adds nothing.
      const text = `${key} is being ended by its keeper (${stop.ending}): it releases the lock`;
      log.event('released', { key, released: false, ending: stop.ending }, text);
      return 0;
    }
    const { verdict, releases, failures } = await lock.releaseByToken(exitStatus);
    for (const failure of failures)
      log.warn(`${key} not released on ${failureText(failure)}`, {
        event: 'release-failed',
        key,
        instance: failure.label,
        error: failure.reason,
      });
    // Released, but the waiters were not told (no +publish): warned as `dlock run` does.
    logUnannounced(log, backend.caps, releases, key);
    if (verdict === 'released') {
      log.event('released', { key, released: true, ...exitFields(exitStatus) }, `released ${key}`);
      return 0;
    }
    if (verdict === 'unavailable')
      throw unavailable(
        backend.caps,
        failures.map((f) => retryableFailure(f.label, f.reason)),
      );
    throw notOurs(key);
  } finally {
    backend.close();
  }
}

/**
 * The release of a nested section (its acquire printed DLOCK_NESTED): it took nothing, so it
 * releases nothing, and the keeper renewing the token is the enclosing section's, left running.
 * 0 while the enclosing holder holds the lock (it releases it when it ends), 76 when it no
 * longer does, 69 when too few instances answer.
 */
export async function releaseNested(config: ConnectionConfig, key: string, token: string, log: Logger) {
  const backend = await openBackend(config);
  try {
    if (!(await backend.lock(key, { owner: token }).stillHeld())) throw notOurs(key);
    const text = `${key} is held by an enclosing dlock: left held for it (it releases the lock when it ends)`;
    log.event('released', { key, released: false, reentrant: true }, text);
    return 0;
  } finally {
    backend.close();
  }
}

/** Extend the lease by the lock's own TTL (its `ttl_ms`). */
export async function renewAsOwner(config: ConnectionConfig, key: string, token: string, log: Logger): Promise<number> {
  const backend = await openBackend(config);
  try {
    const renewal = await backend.lock(key, { owner: token }).renewByToken(config.connectTimeoutMs);
    if (renewal.kind === 'unavailable') throw unavailable(backend.caps, renewal.failures);
    if (renewal.kind === 'not-ours') throw notOurs(key);
    if (renewal.kind === 'failed') throw new UnavailableError(`could not renew ${key}: ${renewal.errors.join('; ')}`);
    log.event('renewed', { key, ttl_ms: renewal.ttlMs }, `renewed ${key} for ${renewal.ttlMs}ms`);
    return 0;
  } finally {
    backend.close();
  }
}

function notOurs(key: string): LockLostError {
  return new LockLostError(
    `${key} was no longer this owner's (it expired or was taken): the section ran unprotected at some point`,
    { event: 'not-ours', fields: { key } },
  );
}
