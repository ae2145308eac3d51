// Joining and waiting in etcd's mutex line: one txn puts the owner's key on its lease (if it is not
// there already) and reads the first key; the owner holds when its key is first. Otherwise it
// watches only its nearest predecessor until that key is deleted, then looks again (etcd's
// clientv3/concurrency Mutex, which `etcdctl lock` runs: the two exclude each other).

import { b64, int64, kvsOf, prefixEnd, revisionOf, type Json, type Kv } from './codec.js';
import type { Gateway } from './gateway.js';
import { lie } from './lease.js';
import { isObject } from './codec.js';

/** The range of every key of one lock, oldest first, `limit` of them. */
export function lineRange(lockPrefix: string, limit: number, keysOnly = false): Json {
  return {
    key: b64(lockPrefix),
    range_end: prefixEnd(lockPrefix),
    sort_target: 'CREATE',
    sort_order: 'ASCEND',
    limit: String(limit),
    ...(keysOnly ? { keys_only: true } : {}),
  };
}

export interface Joined {
  /** The create revision of the owner's key: its place in line, and the fence once it holds. */
  myRev: string;
  /** The store's revision after the txn (ETCD_LOCK_REV when it holds at once). */
  revision: string;
  /** The first key in line (the holder), when there is one. */
  first: Kv | undefined;
}

/**
 * Put `key` on `lease` unless it exists, and read the first key of the line, in one txn; with
 * `register` (a --supersede waiter's first join), put that key too, in the same revision.
 */
export async function join(
  gateway: Gateway,
  lockPrefix: string,
  key: string,
  lease: string,
  value: string,
  timeoutMs: number,
  register?: { key: string; value: string },
): Promise<Joined> {
  const first = { request_range: lineRange(lockPrefix, 1) };
  const registered = register ? [{ request_put: { key: b64(register.key), value: b64(register.value) } }] : [];
  const reply = await gateway.call(
    '/v3/kv/txn',
    {
      compare: [{ target: 'CREATE', key: b64(key), result: 'EQUAL', create_revision: '0' }],
      success: [{ request_put: { key: b64(key), value: b64(value), lease } }, ...registered, first],
      failure: [{ request_range: { key: b64(key) } }, first],
    },
    timeoutMs,
  );
  const revision = revisionOf(reply);
  const responses = Array.isArray(reply.responses) ? reply.responses : [];
  const range = (n: number) => (isObject(responses[n]) ? responses[n].response_range : undefined);
  // A txn whose compare failed has no `succeeded` (zero values are left out).
  const own = reply.succeeded === true ? revision : kvsOf(range(0))[0]?.createRevision;
  if (revision === undefined || own === undefined)
    throw lie(gateway, 'the txn that joins the line answered without revisions');
  return { myRev: own, revision, first: kvsOf(range(reply.succeeded === true ? 1 + registered.length : 1))[0] };
}

export interface Ahead {
  /** The nearest key before the owner's (the one to watch); undefined when none is left: it holds. */
  predecessor: Kv | undefined;
  /** How many keys are before it (1: only the holder); undefined past MAX_PLACE. */
  place: number | undefined;
  /** The revision the read was made at: a watch starts there, so no deletion after it is missed. */
  revision: string;
}

const MAX_PLACE = 1000;

/** The keys before revision `myRev` in line, nearest first (keys only). */
export async function ahead(gateway: Gateway, lockPrefix: string, myRev: string, timeoutMs: number): Promise<Ahead> {
  const before = (BigInt(myRev) - 1n).toString();
  const reply = await gateway.call(
    '/v3/kv/range',
    {
      key: b64(lockPrefix),
      range_end: prefixEnd(lockPrefix),
      sort_target: 'CREATE',
      sort_order: 'DESCEND',
      max_create_revision: before,
      limit: String(MAX_PLACE + 1),
      keys_only: true,
    },
    timeoutMs,
  );
  const revision = revisionOf(reply);
  if (revision === undefined) throw lie(gateway, 'a range answered without a revision');
  const kvs = kvsOf(reply).filter((kv) => BigInt(kv.createRevision) < BigInt(myRev));
  return { predecessor: kvs[0], place: kvs.length > MAX_PLACE ? undefined : kvs.length, revision };
}

/** One key as a range reads it; undefined when it does not exist. */
export async function readKey(gateway: Gateway, key: string, timeoutMs: number): Promise<Kv | undefined> {
  const reply = await gateway.call('/v3/kv/range', { key: b64(key) }, timeoutMs);
  // A reply without a revision is no range's: taken for "no key" it would say the hold is gone.
  if (revisionOf(reply) === undefined) throw lie(gateway, 'a range answered without a revision');
  return kvsOf(reply).find((kv) => kv.key === key);
}

/**
 * Wait until `key` is deleted at or after `revision`: true when it was, false when the watch ended
 * for another reason (it ran for WATCH_RENEW_MS, the stream closed, `signal` aborted): the caller
 * reads the line again, so an ended watch is never taken for a release. With `lineOf` (a lock's
 * prefix), any change to a key of that line counts (a --supersede waiter's watch: the caller reads
 * the line and its own key again).
 */
export async function deleted(
  gateway: Gateway,
  key: string,
  revision: string,
  signal: AbortSignal,
  connectTimeoutMs: number,
  lineOf?: string,
): Promise<boolean> {
  const range = lineOf === undefined ? {} : { range_end: prefixEnd(lineOf) };
  const request = { create_request: { key: b64(lineOf ?? key), ...range, start_revision: revision } };
  const counts = (event: Record<string, unknown>, kv: Record<string, unknown>) =>
    lineOf !== undefined || (event.type === 'DELETE' && kv.key === b64(key));
  return gateway.watch(request, signal, connectTimeoutMs, (result) => {
    const events = Array.isArray(result.events) ? result.events : [];
    return events.some(
      (event) =>
        isObject(event) && isObject(event.kv) && int64(event.kv.mod_revision) !== undefined && counts(event, event.kv),
    );
  });
}
