// Single-instance release: compare-and-delete, then wake the waiters that may now enter. One
// attempt; the retries (it is idempotent: a second delete by the same owner finds nothing) are
// the caller's.

import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { parseReleaseReply } from './replies.js';
import { LINE_LIB_CALLS, RELEASE } from './scripts.js';

/**
 * released: it was ours and is deleted; unannounced: deleted, but the server refused the
 * PUBLISH that wakes the waiters (they notice by polling); not-ours: it was not ours (any more);
 * forced: not ours because `release --force` closed our hold.
 * Throws on errors (an error reply means nothing was deleted; a lost reply may hide a DEL).
 * `notify: false` leaves the waiters asleep (undoing a partial hold that turned nobody away).
 */
export type ReleaseReply = 'released' | 'unannounced' | 'not-ours' | 'forced';

/**
 * What the release records (one instance only): the history entry with the run's exit status
 * ("" when no command ran), and with exit status "0" and `oncePerMs`, the done mark.
 */
export interface ReleaseRecord {
  exitStatus: string;
  oncePerMs: number;
  /** Why dlock ended the job ("max-hold", "heartbeat-missed"): the entry's `reason` field; "" or none: no field. */
  reason?: string;
  /** The command's own status when dlock ended it (`exitStatus` is then 124): `command_exit`; "" or none: no field. */
  commandExit?: string;
  /** `dlock unhold`: who ends the hold; `forced`: another user's hold, recorded as `forced` (a steal). */
  by?: { user: string; host: string; forced: boolean };
}

export interface ReleaseInput {
  owner: string;
  /** false: delete without waking the waiters. */
  notify: boolean;
  record?: ReleaseRecord;
  /** The owner's fence, when known: a hold closed by release --force is told by it (reply "forced"). */
  fence?: string;
}

/** lua/release.lua: compare-and-delete our hold, then wake the waiters that may now enter. */
export const releaseScript = defineScript({
  name: 'release',
  lua: RELEASE,
  commands: LINE_LIB_CALLS,
  keys: (k: LockKeys) => [k.lock, k.released, k.holders, k.line, k.lineExpiry, k.lineInfo, k.done, k.history, k.totals],
  args: ({ owner, notify, record, fence }: ReleaseInput, k) => [
    owner,
    notify ? '1' : '0',
    k.wakePrefix,
    ...(record
      ? ['1', record.exitStatus, Math.round(record.oncePerMs), record.reason ?? '', record.commandExit ?? '']
      : ['0', '', 0, '', '']),
    fence ?? '',
    record?.by
      ? JSON.stringify({
          by_user: record.by.user,
          by_host: record.by.host,
          ...(record.by.forced ? { forced: '1' } : {}),
        })
      : '',
  ],
  parse: parseReleaseReply,
});
