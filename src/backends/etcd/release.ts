// Releasing an etcd hold: delete the owner's key if it is still on the owner's lease (one txn, so
// a key release --force re-attached to a closing lease is not deleted), then revoke the lease
// (etcdctl leaves its lease to expire). Retried until the bound: both are idempotent.

import type { MemberRelease, ReleaseOptions, ReleaseOutcome } from '../../backend/backend.js';
import type { MemberFailure } from '../../backend/failure.js';
import { now, sleep } from '../../clock.js';
import { b64, isObject, kvsOf, revisionOf } from './codec.js';
import { GatewayError, type Gateway } from './gateway.js';
import { holderOf } from './holders.js';
import { lie, revoke } from './lease.js';

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
export async function leave(hold: EtcdHold): Promise<MemberFailure | undefined> {
  const [outcome] = await release(hold, { boundMs: hold.connectTimeoutMs });
  return outcome?.outcome.kind === 'failed' ? { ...failedAt(hold), reason: outcome.outcome.reason } : undefined;
}

function failedAt(hold: EtcdHold): MemberFailure {
  return { label: hold.gateway.label, reason: '', permanent: false, reached: false, errorReply: false };
}

/** Release: one entry (the cluster is one member of the vocabulary). */
export async function release(hold: EtcdHold, options: ReleaseOptions = {}): Promise<MemberRelease[]> {
  const deadline = now() + (options.boundMs ?? hold.connectTimeoutMs);
  const label = hold.gateway.label;
  let replyLost: string | undefined;
  let firstFailure: string | undefined;
  let outcome: ReleaseOutcome | undefined;
  for (let attempt = 0; outcome === undefined; attempt++) {
    const timeoutMs = Math.max(1, Math.min(hold.timeoutMs, Math.floor(deadline - now())));
    try {
      outcome = await deleteOwn(hold, timeoutMs, replyLost);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const reason = (firstFailure ??= error.failure.reason);
      if (!error.failure.errorReply) replyLost ??= error.failure.reason;
      const pauseMs = Math.min(25 * 2 ** Math.min(attempt, 4), deadline - now() - 10);
      if (options.retry === false || pauseMs <= 0 || error.failure.permanent) {
        outcome = { kind: 'failed', reason };
        break;
      }
      await sleep(pauseMs);
    }
  }
  // The lease goes too, whatever the key's fate (a waiter's, a closed hold's): best effort, bounded.
  const left = Math.floor(deadline - now());
  if (left > 0) await revoke(hold.gateway, hold.lease, Math.min(hold.timeoutMs, left)).catch(() => false);
  return [{ label: hold.gateway.label === label ? label : hold.gateway.label, outcome }];
}

/** One txn: delete the key if it is on our lease; else read it (closed by release --force, or gone). */
async function deleteOwn(hold: EtcdHold, timeoutMs: number, replyLost: string | undefined): Promise<ReleaseOutcome> {
  const key = b64(hold.holdKey);
  const reply = await hold.gateway.call(
    '/v3/kv/txn',
    {
      compare: [{ target: 'LEASE', key, result: 'EQUAL', lease: hold.lease }],
      success: [{ request_delete_range: { key } }],
      failure: [{ request_range: { key } }],
    },
    timeoutMs,
  );
  // A reply without a revision is no txn's: taken for "not ours" it would say the section ran unprotected.
  if (revisionOf(reply) === undefined) throw lie(hold.gateway, 'the txn that releases answered without a revision');
  if (reply.succeeded === true) return { kind: 'released', notified: true };
  const responses = Array.isArray(reply.responses) ? reply.responses : [];
  const range = isObject(responses[0]) ? responses[0].response_range : undefined;
  const kv = kvsOf(range).find((one) => one.key === hold.holdKey);
  if (kv && holderOf(kv, hold.owner).forcedMs > 0) return { kind: 'not-ours', forced: true };
  return replyLost === undefined ? { kind: 'not-ours' } : { kind: 'released-or-expired', reason: replyLost };
}
