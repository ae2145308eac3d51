// --supersede on etcd: a waiter that joins with it marks every older --supersede waiter's key (its
// value gets `superseded_by`, its lease and place unchanged) in one txn that holds only while the
// holder's key is still first and each marked key unchanged: the holder is never touched, whatever
// happens between the read and the write. A marked waiter sees the mark (it watches the whole line,
// and reads its own key before it would start) and leaves: its lease revoked, its key gone.

import type { HolderMeta } from '../../backend/holder.js';
import { b64, type Kv } from './codec.js';
import type { Gateway } from './gateway.js';
import { supersededValue, supersedes } from './holders.js';
import { lineRange } from './line.js';
import { kvsOf } from './codec.js';

/** The most waiters one join reads to mark (one --supersede waiter is ever left in line; more are forged). */
const LINE_READ = 1000;
/** Marking is retried when the line changed between the read and the txn; then left to the next join. */
const TRIES = 3;

/** Mark the --supersede waiters ahead of revision `myRev` (not the holder): how many were marked. */
export async function supersedeOlder(
  gateway: Gateway,
  lockPrefix: string,
  myRev: string,
  by: HolderMeta,
  timeoutMs: number,
): Promise<number> {
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const kvs = kvsOf(await gateway.call('/v3/kv/range', lineRange(lockPrefix, LINE_READ), timeoutMs));
    const [holder, ...waiting] = kvs;
    const older = waiting.filter((kv) => BigInt(kv.createRevision) < BigInt(myRev) && kv.lease && supersedes(kv));
    if (!holder || older.length === 0) return 0;
    const unchanged = (kv: Kv) => ({ target: 'MOD', key: b64(kv.key), result: 'EQUAL', mod_revision: kv.modRevision });
    const reply = await gateway.call(
      '/v3/kv/txn',
      {
        compare: [holder, ...older].map(unchanged),
        success: older.map((kv) => ({
          request_put: { key: b64(kv.key), value: b64(supersededValue(kv, by)), lease: kv.lease },
        })),
      },
      timeoutMs,
    );
    if (reply.succeeded === true) return older.length;
  }
  return 0;
}
