// What a lock hash says about its holder, as status, release --force and the spinner show it.

export interface Holder {
  /** The owner token; "" when nobody owns the key: closed by `release --force`, or not dlock's. */
  owner: string;
  fence: string;
  host: string;
  pid: string;
  cmd: string;
  sinceMs: number;
  ttlMs: number;
  /** When `release --force` closed it (ms since the epoch), 0 if it did not. */
  forcedMs: number;
}

/** Turn a flat HGETALL reply into a Holder, or undefined when the hash was empty. */
export function holderFromReply(flat: unknown): Holder | undefined {
  if (!Array.isArray(flat) || flat.length === 0) return undefined;
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[String(flat[i])] = String(flat[i + 1]);
  return {
    owner: fields.owner ?? '',
    fence: fields.fence ?? '',
    host: printable(fields.host ?? ''),
    pid: printable(fields.pid ?? ''),
    cmd: printable(fields.cmd ?? ''),
    sinceMs: Number(fields.since_ms ?? 0),
    ttlMs: Number(fields.ttl_ms ?? 0),
    forcedMs: Number(fields.forced_ms ?? 0) || 0,
  };
}

/** Anyone who can write to Redis can put terminal escape codes in a hash: show them inert. */
function printable(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
