// Reading etcd locks: one lock's line from one range (status, the spinner, nested runs), every lock
// under the prefix in pages (status without a key, metrics), release --force. The cluster is one
// member of the vocabulary: it agrees by itself, so a read is the verdict.

import type {
  ForceRelease,
  ListedLock,
  LockListing,
  LockRead,
  MemberView,
  Nested,
  ParentLease,
} from '../../backend/backend.js';
import { unavailable } from '../../backend/failure.js';
import type { Capabilities } from '../../backend/capabilities.js';
import type { Holder } from '../../backend/holder.js';
import { epochMs } from '../../clock.js';
import { UnavailableError } from '../../errors.js';
import { cut } from '../../untrusted.js';
import { b64, bytesOf, countOf, isObject, kvsOf, prefixEnd, prefixStart, type Kv } from './codec.js';
import { GatewayError, type Gateway } from './gateway.js';
import { closedValue, holderOf, waiterOf } from './holders.js';
import { leaseOfOwner, newLeaseOwner, ownerOfSuffix, parseHoldKey } from './keys.js';
import { grant, lie, revoke, timeToLive } from './lease.js';
import { lineRange } from './line.js';
import type { EtcdHold } from './release.js';

/** Waiters shown by status (the count says how many wait in all). */
const LINE_SHOWN = 10;

/** The owner token of a key of the lock (its lease, as the key names it in hex; "" when it names none). */
function ownerOfKey(hold: Pick<EtcdHold, 'lockPrefix'>, kv: Kv): string {
  return ownerOfSuffix(kv.key.slice(hold.lockPrefix.length));
}

/** A hold until `dlock unhold`: its lease (etcd's longest) is no end to show; it has none, as on Redis. */
function endless(holder: Holder): boolean {
  return holder.hold === true && holder.untilMs === undefined;
}

export async function readLock(hold: EtcdHold): Promise<LockRead> {
  const label = hold.gateway.label;
  try {
    const reply = await hold.gateway.call(
      '/v3/kv/range',
      lineRange(hold.lockPrefix, LINE_SHOWN + 1),
      hold.connectTimeoutMs,
    );
    const kvs = kvsOf(reply).filter((kv) => kv.key.startsWith(hold.lockPrefix));
    const first = kvs[0];
    const lineLength = Math.max(0, Math.max(countOf(reply), kvs.length) - 1);
    const holder = first ? holderOf(first, ownerOfKey(hold, first)) : undefined;
    const lease = first?.lease ? await timeToLive(hold.gateway, first.lease, hold.connectTimeoutMs) : undefined;
    const ttlLeftMs = holder && endless(holder) ? -1 : (lease?.leftMs ?? -1);
    if (holder && holder.ttlMs === undefined && lease && !endless(holder)) holder.ttlMs = lease.grantedMs;
    const view: MemberView = {
      label: hold.gateway.label,
      held: holder !== undefined,
      ...(holder ? { holder, ttlLeftMs } : {}),
    };
    const nowMs = Date.now();
    return {
      verdict: holder ? 'held' : 'free',
      ...(holder ? { agreed: view } : {}),
      state: {
        holder,
        holders: holder ? [holder] : [],
        mode: { kind: 'exclusive' },
        ttlLeftMs,
        line: kvs.slice(1, LINE_SHOWN + 1).map((kv) => waiterOf(kv, nowMs)),
        lineLength,
      },
      members: [view],
    };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { verdict: 'unknown', members: [{ label, held: false, failure: error.failure }] };
  }
}

/** Lease reads in flight at once while listing. */
const LEASE_READS = 16;

/** Keys per page of a listing. */
const PAGE = 1000;

/** Keys a listing reads at most: a listing is never unbounded, whatever the server says. */
const MAX_LISTED = 100_000;

/**
 * Where the page after `reply` starts: right after its last key's own bytes (a key that is not
 * UTF-8 is not what its decoded text says). A page that does not go past `from` is a lie.
 */
function nextPage(gateway: Gateway, reply: Record<string, unknown>, from: string): string {
  const last = Array.isArray(reply.kvs) ? reply.kvs.at(-1) : undefined;
  const bytes = isObject(last) ? bytesOf(last.key) : undefined;
  const next = bytes && Buffer.concat([bytes, Buffer.from([0])]);
  if (!next || Buffer.compare(next, Buffer.from(from, 'base64')) <= 0)
    throw lie(gateway, 'a range said there was more without going on');
  return b64(next);
}

/** Every lock under the prefix that someone holds, with its line's length. */
export async function listLocks(gateway: Gateway, prefix: string, timeoutMs: number): Promise<LockListing> {
  // Per lock, only its first key (the holder) and how many it has: memory grows with the locks, not the keys.
  const locks = new Map<string, { first: Kv; owner: string; keys: number }>();
  try {
    let from = prefixStart(prefix);
    const end = prefixEnd(prefix);
    let read = 0;
    for (;;) {
      const reply = await gateway.call('/v3/kv/range', { key: from, range_end: end, limit: String(PAGE) }, timeoutMs);
      const kvs = kvsOf(reply);
      for (const kv of kvs) {
        const parsed = parseHoldKey(prefix, kv.key);
        if (!parsed) continue;
        const seen = locks.get(parsed.name);
        if (!seen) locks.set(parsed.name, { first: kv, owner: parsed.owner, keys: 1 });
        else {
          seen.keys++;
          if (BigInt(kv.createRevision) < BigInt(seen.first.createRevision))
            [seen.first, seen.owner] = [kv, parsed.owner];
        }
      }
      if (!(isObject(reply) && reply.more === true) || kvs.length === 0) break;
      from = nextPage(gateway, reply, from);
      read += kvs.length;
      if (read >= MAX_LISTED)
        throw lie(
          gateway,
          `more than ${MAX_LISTED} keys under the prefix "${cut(prefix, 64)}": give dlock its own --prefix`,
        );
    }
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    throw new UnavailableError(`cannot list locks: ${error.failure.label}: ${error.failure.reason}`);
  }
  const keys = [...locks.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const held: ListedLock[] = [];
  const unreadable: LockListing['unreadable'] = [];
  // Each holder's lease left, LEASE_READS at a time.
  for (let from = 0; from < keys.length; from += LEASE_READS) {
    const batch = keys.slice(from, from + LEASE_READS);
    const reads = await Promise.all(
      batch.map(async (name) => {
        const { first, owner, keys: count } = locks.get(name)!;
        const holder = holderOf(first, owner);
        try {
          const lease = first.lease ? await timeToLive(gateway, first.lease, timeoutMs) : undefined;
          if (lease && holder.ttlMs === undefined && !endless(holder)) holder.ttlMs = lease.grantedMs;
          const ttlMs = endless(holder) ? -1 : (lease?.leftMs ?? -1);
          return { held: { key: name, holder, ttlMs, all: [holder], waiting: count - 1 } };
        } catch (error) {
          if (!(error instanceof GatewayError)) throw error;
          return { unreadable: { key: name, error: `${error.failure.label}: ${error.failure.reason}` } };
        }
      }),
    );
    for (const read of reads) {
      if (read.held) held.push(read.held);
      else unreadable.push(read.unreadable!);
    }
  }
  return { keys, held, unreadable };
}

/**
 * release --force: remove the holder. `now`: its key and lease go at once. Otherwise its key is moved
 * onto a new lease as long as what was left of its own, marked closed, and its lease revoked: its
 * dlock hears at the next keepalive that the lock is gone and stops its command, and nobody else
 * enters until the closed key expires (the same promise as on Redis).
 */
export async function forceRelease(hold: EtcdHold, now: boolean): Promise<ForceRelease> {
  try {
    const reply = await hold.gateway.call('/v3/kv/range', lineRange(hold.lockPrefix, 1), hold.connectTimeoutMs);
    const first = kvsOf(reply).find((kv) => kv.key.startsWith(hold.lockPrefix));
    if (!first) return { removed: [], failed: [] };
    const holder = holderOf(first, ownerOfKey(hold, first));
    if (holder.forcedMs > 0 && !now) return { removed: [], failed: [] };
    const lease = first.lease ? await timeToLive(hold.gateway, first.lease, hold.connectTimeoutMs) : undefined;
    const key = b64(first.key);
    const same = [{ target: 'CREATE', key, result: 'EQUAL', create_revision: first.createRevision }];
    if (now || !lease) {
      await hold.gateway.call(
        '/v3/kv/txn',
        { compare: same, success: [{ request_delete_range: { key } }] },
        hold.connectTimeoutMs,
      );
      if (first.lease) await revoke(hold.gateway, first.lease, hold.connectTimeoutMs);
      return { removed: [{ ...holder, closedForMs: 0 }], failed: [] };
    }
    // The closed key's lease: a fresh random id, as an owner's (keys.ts).
    const closing = leaseOfOwner(newLeaseOwner())!;
    const closedForMs = await grant(hold.gateway, closing, lease.leftMs, hold.connectTimeoutMs);
    const moved = await hold.gateway.call(
      '/v3/kv/txn',
      {
        compare: same,
        success: [{ request_put: { key, value: b64(closedValue(first, Math.round(epochMs()))), lease: closing } }],
      },
      hold.connectTimeoutMs,
    );
    if (moved.succeeded !== true) {
      // Released meanwhile: nothing to close.
      await revoke(hold.gateway, closing, hold.connectTimeoutMs);
      return { removed: [], failed: [] };
    }
    await revoke(hold.gateway, first.lease!, hold.connectTimeoutMs);
    return { removed: [{ ...holder, closedForMs }], failed: [] };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { removed: [], failed: [error.failure] };
  }
}

/**
 * The hold of the handle's owner (a nested dlock's parent) when its key is first in line: exclusive
 * is the only kind etcd holds; undefined when it is not the holder.
 */
export async function heldBy(hold: EtcdHold, caps: Capabilities, _nested?: Nested): Promise<ParentLease | undefined> {
  try {
    const reply = await hold.gateway.call('/v3/kv/range', lineRange(hold.lockPrefix, 1), hold.connectTimeoutMs);
    const first = kvsOf(reply).find((kv) => kv.key.startsWith(hold.lockPrefix));
    if (!first || first.key !== hold.holdKey || first.lease !== hold.lease) return undefined;
    if (holderOf(first, hold.owner).forcedMs > 0) return undefined;
    const lease = await timeToLive(hold.gateway, hold.lease, hold.connectTimeoutMs);
    if (!lease) return undefined;
    return { mode: { kind: 'exclusive' }, ttlMs: lease.grantedMs, fence: first.createRevision };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    throw unavailable(caps, [error.failure]);
  }
}
