// Releasing an etcd hold: revoke the owner's lease, which deletes its key in the same raft entry
// (etcdctl deletes the key and leaves its lease to expire): one request. A lease already gone was
// not ours to release any more: its key is read to tell a hold release --force closed (moved onto
// a closing lease, so this revoke cannot delete it) from one that expired. Retried until the
// bound: revoking is idempotent.

import type { MemberRelease, ReleaseOptions, ReleaseOutcome } from '../../backend/backend.js';
import type { MemberFailure } from '../../backend/failure.js';
import { now, sleep } from '../../clock.js';
import { GatewayError, type Gateway } from './gateway.js';
import { holderOf } from './holders.js';
import { revoke } from './lease.js';
import { readKey } from './line.js';

/** One handle's hold: where its key is, its lease, and what obtain learnt. */
export interface EtcdHold {
  gateway: Gateway;
  /** `<prefix><escaped name>/`: the range of the lock's keys. */
  lockPrefix: string;
  /** The owner's key: lockPrefix + the lease in hex. */
  holdKey: string;
  /** The owner token: the lease id in hex. */
  owner: string;
  /** The lease id, decimal (as the gateway takes it); undefined when the owner token names no lease. */
  lease: string;
  /** The lease length: asked, then as etcd applied it (whole seconds, at least its minimum). */
  ttlMs: number;
  /** One request's timeout while holding (--connect-timeout, at most ttl/3). */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** The create revision of the owner's key, once it joined the line (the fence). */
  myRev?: string;
}

/** Leave the line (an attempt given up): the key and the lease go; the failure when they could not. */
export async function leave(
  hold: EtcdHold,
  options: ReleaseOptions = { boundMs: hold.connectTimeoutMs },
): Promise<MemberFailure | undefined> {
  const [outcome] = await release(hold, options);
  return outcome?.outcome.kind === 'failed' ? { ...failedAt(hold), reason: outcome.outcome.reason } : undefined;
}

function failedAt(hold: EtcdHold): MemberFailure {
  return { label: hold.gateway.label, reason: '', permanent: false, reached: false, errorReply: false };
}

/** Release: one entry (the cluster is one member of the vocabulary). */
export async function release(hold: EtcdHold, options: ReleaseOptions = {}): Promise<MemberRelease[]> {
  const deadline = now() + (options.boundMs ?? hold.connectTimeoutMs);
  let replyLost: string | undefined;
  let firstFailure: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const timeoutMs = Math.max(1, Math.min(hold.timeoutMs, Math.floor(deadline - now())));
    try {
      const outcome = (await revoke(hold.gateway, hold.lease, timeoutMs, true))
        ? ({ kind: 'released', notified: true } as const)
        : await notOurs(hold, timeoutMs, replyLost);
      return [{ label: hold.gateway.label, outcome }];
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const reason = (firstFailure ??= error.failure.reason);
      // No answer may hide a revoke that ran: a retry that finds the lease gone cannot tell.
      if (!error.failure.errorReply) replyLost ??= error.failure.reason;
      const pauseMs = Math.min(25 * 2 ** Math.min(attempt, 4), deadline - now() - 10);
      if (options.retry === false || pauseMs <= 0 || error.failure.permanent)
        return [{ label: hold.gateway.label, outcome: { kind: 'failed', reason } }];
      await sleep(pauseMs);
    }
  }
}

/** The lease was gone: closed by release --force (its key is still there, marked), or expired. */
async function notOurs(hold: EtcdHold, timeoutMs: number, replyLost: string | undefined): Promise<ReleaseOutcome> {
  const kv = await readKey(hold.gateway, hold.holdKey, timeoutMs);
  if (kv && holderOf(kv, hold.owner).forcedMs > 0) return { kind: 'not-ours', forced: true };
  return replyLost === undefined ? { kind: 'not-ours' } : { kind: 'released-or-expired', reason: replyLost };
}
