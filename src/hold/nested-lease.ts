// The lease a nested `dlock run` keeps alive under the lock an enclosing dlock holds: nobody else
// may renew it (a `dlock acquire --no-keeper` section, docs/guides/ci.md's dotenv flow). Renewed
// under the enclosing holder's token with its own lease length and kind (owner-checked, as
// `dlock renew` does), every ttl/3 by the Lease every hold uses; its loss is reported through
// `lost` as a hold's is. Two renewers of one lease (the keeper or the outer run, and this) are
// harmless. Never released here, and never re-taken on a Redlock instance that lost it (that
// would write this process over the holder's host, pid and command): the holder that took the
// lock does both.

import { LockLostError, UnavailableError } from '../errors.js';
import type { Backend, ParentLease } from '../backend/index.js';
import type { Logger } from '../log.js';
import { now } from '../clock.js';
import { Lease } from './lease.js';

export interface EnclosingHold {
  key: string;
  /** The enclosing holder's owner token. */
  token: string;
  /** Its fencing token, as the log lines name it. */
  fence: string;
  /** Its lease as the server records it. */
  lease: ParentLease;
  /** The lease length when the server does not record one: DLOCK_TTL_MS, else this run's --ttl. */
  fallbackTtlMs: number;
}

/**
 * Renew the enclosing holder's lease once now (refused: 76, nothing renewed: 69; the command is
 * not started) and go on renewing it every ttl/3, on this run's open `backend`.
 */
export async function keepEnclosingLease(
  backend: Backend,
  hold: EnclosingHold,
  connectTimeoutMs: number,
  killAfterMs: number,
  log: Logger,
): Promise<Lease> {
  const { key, fence } = hold;
  const ttlMs = hold.lease.ttlMs ?? hold.fallbackTtlMs;
  const leased = backend.lock(key, { owner: hold.token, ttlMs, mode: hold.lease.mode });
  const first = await leased.extend({ givesUpAt: now() + connectTimeoutMs });
  if (first.kind === 'refused') {
    throw new LockLostError(
      `lost the lock ${key} before the command started: renewal refused: the lock was deleted or taken over`,
    );
  }
  if (first.kind === 'failed') throw new UnavailableError(`could not renew ${key}: ${first.errors.join('; ')}`);
  return new Lease(leased, first.startedAt, Math.min(killAfterMs, Math.floor(ttlMs / 3)), {
    renewed: () => log.event('renewed', { key, fence, reentrant: true }, `renewed ${key} (fence ${fence})`),
    renewFailed: (errors) =>
      log.event(
        'renew-failed',
        { key, fence, error: errors.join('; '), reentrant: true },
        `renewing ${key} failed: ${errors.join('; ')}`,
      ),
  });
}
