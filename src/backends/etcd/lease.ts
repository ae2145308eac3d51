// One lease's calls: grant it (with the id the owner token names), keep it alive once, revoke it.
// etcd raises a TTL under its minimum (1.5 × the election timeout, 2 s by default) and rounds
// nothing down: the TTL it answers is the one applied, and the hold renews and counts by it.

import { CODE, GatewayError, type Gateway } from './gateway.js';
import { int64, isObject, positive, revisionOf } from './codec.js';

/** A TTL in whole seconds, at least 1: what a lease of `ttlMs` is asked for. */
export function ttlSeconds(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs / 1000));
}

/** etcd's largest lease TTL (MaxLeaseTTL: 9 000 000 000 s); anything above it in a reply is a lie. */
const MAX_TTL_S = 9_000_000_000;

/**
 * Grant lease `id` (decimal) for `ttlMs`: the TTL etcd applied, in ms (never less than asked, or a
 * failure). A lease that already exists is ours (the id is the owner's, and a grant whose reply was
 * lost may have made it): kept alive instead, which says its TTL.
 */
export async function grant(gateway: Gateway, id: string, ttlMs: number, timeoutMs: number): Promise<number> {
  const asked = ttlSeconds(ttlMs);
  let ttl: number | undefined;
  try {
    const reply = await gateway.call('/v3/lease/grant', { ID: id, TTL: String(asked) }, timeoutMs);
    ttl = positive(reply.TTL, MAX_TTL_S);
    if (int64(reply.ID) !== id) throw lie(gateway, `granted lease ${String(reply.ID).slice(0, 24)}, not ${id}`);
  } catch (error) {
    if (!(error instanceof GatewayError) || !/lease already exists/.test(error.message)) throw error;
    ttl = await keepAlive(gateway, id, timeoutMs);
    if (ttl === undefined) throw error;
  }
  if (ttl === undefined || ttl < asked) throw lie(gateway, `granted a ${ttl ?? 0}s lease for ${asked}s`);
  return ttl * 1000;
}

/** Keep lease `id` alive once: the TTL it was renewed to (s), undefined when the lease is gone. */
export async function keepAlive(gateway: Gateway, id: string, timeoutMs: number): Promise<number | undefined> {
  const reply = await gateway.call('/v3/lease/keepalive', { ID: id }, timeoutMs);
  // One result per keepalive sent; a lease that is gone answers with no TTL (TTL 0 left out).
  const result = isObject(reply.result) ? reply.result : undefined;
  if (!result) throw lie(gateway, 'keepalive answered without a result');
  return positive(result.TTL, MAX_TTL_S);
}

/** The TTL left (ms) and granted (ms) of lease `id`; undefined when it is gone. */
export async function timeToLive(
  gateway: Gateway,
  id: string,
  timeoutMs: number,
): Promise<{ leftMs: number; grantedMs: number } | undefined> {
  const reply = await gateway.call('/v3/lease/timetolive', { ID: id }, timeoutMs);
  const left = int64(reply.TTL);
  const granted = positive(reply.grantedTTL, MAX_TTL_S);
  if (left === undefined || Number(left) < 0 || granted === undefined) return undefined;
  return { leftMs: Number(left) * 1000, grantedMs: granted * 1000 };
}

/**
 * Revoke lease `id` (its keys go with it); false when it was gone already. `once`: one attempt on
 * one endpoint, so that a caller that retries knows an earlier answer was lost (a second revoke
 * finds the lease gone whether the first ran or not).
 */
export async function revoke(gateway: Gateway, id: string, timeoutMs: number, once = false): Promise<boolean> {
  try {
    const reply = await gateway.call('/v3/lease/revoke', { ID: id }, timeoutMs, { once });
    // A reply without a revision is no revoke's: taken for "released" it would free a lock still held.
    if (revisionOf(reply) === undefined) throw lie(gateway, 'revoke answered without a revision');
    return true;
  } catch (error) {
    if (error instanceof GatewayError && error.code === CODE.notFound) return false;
    throw error;
  }
}

/** A reply that cannot be true: the member answered, and no retry will make it honest. */
export function lie(gateway: Gateway, what: string): GatewayError {
  return new GatewayError({ label: gateway.label, reason: what, permanent: true, reached: true, errorReply: true });
}
