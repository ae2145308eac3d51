// What the gateway speaks: base64 keys and values, int64 as decimal strings (lease ids pass 2^53),
// zero values left out. Everything read from a reply is checked here before use: a field of the
// wrong type reads as missing, never as a crash.

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text as the gateway takes a key or value. */
export function b64(text: string | Buffer): string {
  return (typeof text === 'string' ? Buffer.from(text, 'utf8') : text).toString('base64');
}

/** A base64 field as bytes; undefined when missing (a zero value) or not base64 text. */
export function bytesOf(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return undefined;
  return Buffer.from(value, 'base64');
}

/** The range start of every key starting with `prefix`: "\0" for '' (etcd takes an empty key as none given). */
export function prefixStart(prefix: string): string {
  return prefix === '' ? b64(Buffer.from([0])) : b64(prefix);
}

/** The range end that covers every key starting with `prefix` (its last byte plus one). */
export function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 0xff) {
      const end = bytes.subarray(0, i + 1);
      end[i]!++;
      return b64(end);
    }
  }
  // Every byte 0xff (or empty): to the end of the keyspace.
  return b64(Buffer.from([0]));
}

/** An int64 field (a revision, a TTL, a lease id) as a decimal string; undefined when missing, 0 or not one. */
export function int64(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !/^-?\d{1,19}$/.test(text)) return undefined;
  const n = BigInt(text);
  if (n === 0n || n > MAX_INT64 || n < -MAX_INT64 - 1n) return undefined;
  return n.toString();
}

/** A positive int64 field as a number, for TTLs and counts; undefined when missing, not positive or not one. */
export function positive(value: unknown, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const text = int64(value);
  if (text === undefined) return undefined;
  const n = Number(text);
  return n > 0 && n <= max ? n : undefined;
}

const MAX_INT64 = 2n ** 63n - 1n;

/** One key-value of a range reply, checked. */
export interface Kv {
  key: string;
  createRevision: string;
  modRevision: string;
  /** The lease id (decimal), when attached to one. */
  lease?: string;
  value: Buffer;
}

/** The kvs of a range reply (or of a txn's response_range), in order; entries that are not key-values are skipped. */
export function kvsOf(range: unknown): Kv[] {
  if (!isObject(range) || !Array.isArray(range.kvs)) return [];
  return range.kvs.flatMap((kv): Kv[] => {
    if (!isObject(kv)) return [];
    const key = bytesOf(kv.key);
    const createRevision = int64(kv.create_revision);
    const modRevision = int64(kv.mod_revision) ?? createRevision;
    if (!key || createRevision === undefined || modRevision === undefined) return [];
    const lease = int64(kv.lease);
    return [
      {
        key: key.toString('utf8'),
        createRevision,
        modRevision,
        ...(lease ? { lease } : {}),
        value: bytesOf(kv.value) ?? Buffer.alloc(0),
      },
    ];
  });
}

/** A range reply's `count` (all keys in the range, not only those returned). */
export function countOf(range: unknown): number {
  return isObject(range) ? (positive(range.count) ?? 0) : 0;
}

/** The reply header's revision; undefined when a reply has none. */
export function revisionOf(reply: unknown): string | undefined {
  return isObject(reply) && isObject(reply.header) ? int64(reply.header.revision) : undefined;
}
