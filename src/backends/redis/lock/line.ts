// The line on one instance: enter it (take the lock when our turn comes), leave it, and renew
// one holder of --slots/--shared: the scripts that share lua/line-lib.lua.

import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { slotsOf, type HoldMode } from '../../../backend/mode.js';
import { parseEnterReply, parseFlagReply } from './replies.js';
import { ENTER, EXTEND_HOLDER, LEAVE, LINE_LIB_CALLS } from './scripts.js';
import { PLACE_LEASE_MS } from './limits.js';
import type { HolderMeta, HolderProgress } from '../../../backend/holder.js';
import type { KeyOptions } from '../../../backend/backend.js';

export type { EnterReply } from './replies.js';

/** What ENTER is asked (the script stamps `since_ms` on the server's clock). */
export interface EnterInput {
  owner: string;
  ttlMs: number;
  meta: HolderMeta;
  mode: HoldMode;
  /** false: --no-wait (never queues). */
  join: boolean;
  /** How long this dlock has waited so far (recorded in the history). */
  waitedMs: number;
  /** What the key's options ask (--once-per: turned away when a run succeeded within its window). */
  keyOptions: KeyOptions;
  /** --supersede: the ticket an earlier attempt of this wait was given ("0" or undefined: none yet). */
  ticket?: string;
}

/** What each attempt asks beyond the set and the holder: how long it has waited, the key's options. */
export type Asked = Pick<EnterInput, 'waitedMs' | 'keyOptions' | 'ticket'>;

/** What `dlock run` tells a loss renewal about the holder, so the history names it. */
export interface LossRecord {
  host: string;
  /** As HolderMeta's: "" for a --no-keeper hold. */
  pid: number | '';
  cmd: string;
  fence: string;
}

/** EXTEND/EXTEND_HOLDER ARGV[8..9]: the job's progress, "" for what is not known. */
export function progressArgs(progress: HolderProgress | undefined): string[] {
  const text = (ms: number | undefined) => (ms === undefined ? '' : String(Math.round(ms)));
  return [
    text(progress?.maxHoldMs),
    text(progress?.beatAgeMs === undefined ? undefined : Math.max(0, progress.beatAgeMs)),
  ];
}

/** EXTEND/EXTEND_HOLDER ARGV[3..7]: record a refused renewal as a loss, or not. */
export function lossArgs(record: LossRecord | undefined): (string | number)[] {
  return record ? ['1', record.host, record.pid, record.cmd, record.fence] : ['0', '', '', '', ''];
}

/** ENTER's ARGV[13]: the holder's --reason, user and hold, as JSON of strings ("{}": none). */
export function holderExtras(meta: HolderMeta): string {
  return JSON.stringify({
    ...(meta.reason ? { reason: meta.reason } : {}),
    ...(meta.user ? { user: meta.user } : {}),
    ...(meta.hold
      ? {
          hold: '1',
          ...(meta.hold.forever ? { forever: '1' } : {}),
          ...(meta.hold.untilMs === undefined ? {} : { until_ms: String(Math.round(meta.hold.untilMs)) }),
        }
      : {}),
  });
}

/** lua/enter.lua: take the lock in line order, or keep (or get) a place in line. */
export const enterScript = defineScript({
  name: 'enter',
  lua: ENTER,
  commands: [...LINE_LIB_CALLS, 'INCR', 'ZADD', 'ZRANK', 'ZREVRANGEBYSCORE'],
  keys: (k: LockKeys) => [
    k.lock,
    k.fence,
    k.holders,
    k.line,
    k.lineExpiry,
    k.lineInfo,
    k.done,
    k.history,
    k.totals,
    k.supersede,
  ],
  args: (i: EnterInput, k) => [
    i.owner,
    i.ttlMs,
    i.meta.host,
    i.meta.pid,
    i.meta.cmd,
    i.mode.kind,
    slotsOf(i.mode),
    i.join ? '1' : '0',
    PLACE_LEASE_MS,
    k.wakePrefix,
    Math.round(i.waitedMs),
    Math.round(i.keyOptions.oncePerMs ?? 0),
    holderExtras(i.meta),
    i.keyOptions.priority ?? 0,
    i.keyOptions.supersede ? (i.ticket ?? '0') : '',
  ],
  parse: (reply, i) => parseEnterReply(reply, i.mode),
});

export interface LeaveInput {
  owner: string;
  /** The history entry to append ("busy": the wait ran out, "left": interrupted, "": none). */
  record: 'busy' | 'left' | '';
  waitedMs: number;
}

/** lua/leave.lua: give up a place in line (a wait ran out or was interrupted), waking whoever may enter now. */
export const leaveScript = defineScript({
  name: 'leave',
  lua: LEAVE,
  commands: LINE_LIB_CALLS,
  keys: (k: LockKeys) => [k.lock, k.holders, k.line, k.lineExpiry, k.lineInfo, k.history, k.totals],
  args: (i: LeaveInput, k) => [i.owner, k.wakePrefix, i.record, Math.round(i.waitedMs)],
  parse: (reply) => parseFlagReply('leave', reply),
});

export interface ExtendHolderInput {
  owner: string;
  ttlMs: number;
  record?: LossRecord;
  progress?: HolderProgress;
}

/** lua/extend-holder.lua: renew one holder of --slots/--shared: true renewed, false no longer held. */
export const extendHolderScript = defineScript({
  name: 'extend-holder',
  lua: EXTEND_HOLDER,
  commands: [...LINE_LIB_CALLS, 'ZADD'],
  keys: (k: LockKeys) => [k.lock, k.holders, k.history, k.totals],
  args: (i: ExtendHolderInput) => [i.owner, i.ttlMs, ...lossArgs(i.record), ...progressArgs(i.progress)],
  parse: (reply) => parseFlagReply('extend', reply),
  evalFirst: true,
});
