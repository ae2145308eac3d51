// --supersede on etcd. The lock's register, `<prefix><escaped name>%supersede` (outside the line's
// range: no name escapes to a raw `%s`, and listings skip a key with no `/`), is put by the txn that
// first joins a --supersede waiter: its ticket is that txn's revision, and the register's value says
// who. A waiter whose ticket is older than the register's mod revision is superseded, in line or
// out of it (a waiter stopped until its lease ran out learns it when it comes back, and never
// joins again). The joiner then deletes the older --supersede waiters' keys, in a txn that holds
// only while the holder's key and theirs are unchanged: the holder is never touched, nor are
// waiters without the flag (an etcdctl lock waiter has none); a deleted waiter wakes (it watches
// its whole line), reads the register and leaves.

import type { Superseder } from '../../backend/holder.js';
import { b64, kvsOf, type Kv } from './codec.js';
import type { Gateway } from './gateway.js';
import { registerBy, supersedes } from './holders.js';
import { lineRange, readKey } from './line.js';

/** The register of the lock whose line is `lockPrefix` (`<prefix><escaped name>/`). */
export function registerKey(lockPrefix: string): string {
  return `${lockPrefix.slice(0, -1)}%supersede`;
}

/** The most waiters one join reads (one --supersede waiter is ever left in line; more are forged). */
const LINE_READ = 1000;
/** Deleting is retried when the line changed between the read and the txn; then left to the next join. */
const TRIES = 3;

/** Delete the keys of the --supersede waiters ahead of revision `ticket`, never the holder's. */
export async function dropOlder(
  gateway: Gateway,
  lockPrefix: string,
  ticket: string,
  timeoutMs: number,
): Promise<void> {
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const kvs = kvsOf(await gateway.call('/v3/kv/range', lineRange(lockPrefix, LINE_READ), timeoutMs));
    const [holder, ...waiting] = kvs;
    const older = waiting.filter((kv) => BigInt(kv.createRevision) < BigInt(ticket) && supersedes(kv));
    if (!holder || older.length === 0) return;
    const unchanged = (kv: Kv) => ({ target: 'MOD', key: b64(kv.key), result: 'EQUAL', mod_revision: kv.modRevision });
    const reply = await gateway.call(
      '/v3/kv/txn',
      {
        compare: [holder, ...older].map(unchanged),
        success: older.map((kv) => ({ request_delete_range: { key: b64(kv.key) } })),
      },
      timeoutMs,
    );
    if (reply.succeeded === true) return;
  }
}

/** Who superseded the waiter holding `ticket`: the register's last joiner, when it is newer; else undefined. */
export async function supersededSince(
  gateway: Gateway,
  lockPrefix: string,
  ticket: string,
  timeoutMs: number,
): Promise<Superseder | undefined> {
  const register = await readKey(gateway, registerKey(lockPrefix), timeoutMs);
  if (!register || BigInt(register.modRevision) <= BigInt(ticket)) return undefined;
  return registerBy(register);
}
