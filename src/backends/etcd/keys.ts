// How dlock's lock names map onto etcd keys: etcdctl lock's layout, `<prefix><name>/<lease id in
// hex>`, the holder the key with the lowest create revision. A `/` in a name is escaped (`%2F`, and
// `%` as `%25`) so that no two names share a prefix: `etcdctl lock a/b` lies under `a/` and blocks
// `a`, dlock's `a/b` does not. With --prefix '' a name meets `etcdctl lock NAME` on the same key;
// with the default `dlock:`, `etcdctl lock dlock:NAME` (docs/operations/etcd.md).

import { closeSync, openSync, readSync } from 'node:fs';

/** The prefix every key of the lock `name` starts with (the range etcdctl's mutex reads). */
export function lockPrefix(prefix: string, name: string): string {
  return `${prefix}${escapeName(name)}/`;
}

/** The key of the hold on lease `lease` (hex). */
export function holdKey(prefix: string, name: string, lease: string): string {
  return `${lockPrefix(prefix, name)}${lease}`;
}

export function escapeName(name: string): string {
  return name.replace(/%/g, '%25').replace(/\//g, '%2F');
}

/** A name as dlock shows it: %2F and %25 decoded (case as escapeName writes them); anything else left as it is. */
function unescapeName(text: string): string {
  return text.replace(/%2F|%25/g, (escape) => (escape === '%2F' ? '/' : '%'));
}

/**
 * The lock a key under the prefix belongs to, and its owner token: the name is what lies before the
 * first "/" (a dlock name has none of its own: it is escaped), since etcd's mutex is a prefix and the
 * key blocks that name whatever follows; the owner is the lease the rest names in hex, or "" when the
 * rest is not one (a key dlock and etcdctl do not write, which blocks the lock all the same).
 */
export function parseHoldKey(prefix: string, key: string): { name: string; owner: string } | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return undefined;
  return { name: unescapeName(rest.slice(0, slash)), owner: ownerOfSuffix(rest.slice(slash + 1)) };
}

/** The owner token a key's last part names: its lease in hex, or "" when it is not one. */
export function ownerOfSuffix(suffix: string): string {
  return /^[0-9a-f]{1,16}$/.test(suffix) ? ownerOfLease(suffix) : '';
}

/**
 * The owner token of a lease: 32 hex digits as every DLOCK_TOKEN is, the lease id in the last 16
 * (the first 16 zero). The key names the lease in etcdctl's way, lowercase hex without padding.
 */
export function ownerOfLease(leaseHex: string): string {
  return leaseHex.padStart(32, '0');
}

/** The lease id (decimal, as the gateway takes it) of an owner token; undefined when the token names no lease. */
export function leaseOfOwner(owner: string): string | undefined {
  if (!/^0{16}[0-9a-f]{16}$/.test(owner)) return undefined;
  const id = BigInt(`0x${owner}`);
  return id > 0n && id < 2n ** 63n ? id.toString() : undefined;
}

/** The lease in hex as the key names it (etcdctl: fmt "%x"). */
export function leaseHexOf(lease: string): string {
  return BigInt(lease).toString(16);
}

/**
 * A fresh owner token naming a random lease id in [2^62, 2^63) that dlock grants the lease with
 * (etcd takes a lease id the client chooses), so the token names the lease and its key before the
 * lease exists. From /dev/urandom when there is one (node:crypto is a cost at start-up).
 */
export function newLeaseOwner(): string {
  const bytes = Buffer.alloc(8);
  let read = 0;
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      read = readSync(fd, bytes, 0, 8, null);
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /dev/urandom: the module then.
  }
  if (read !== 8) process.getBuiltinModule('node:crypto').randomFillSync(bytes);
  const id = (bytes.readBigUInt64BE() & (2n ** 62n - 1n)) | (2n ** 62n);
  return ownerOfLease(id.toString(16));
}
