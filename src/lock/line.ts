// The line on one instance: enter it (take the lock when our turn comes), leave it, and renew
// one holder of --slots/--shared. See the line scripts in scripts.ts.

import type { Instance } from '../redis/client.js';
import { withTimeout } from '../clock.js';
import type { HolderMeta } from './acquire.js';
import { lineKeys, recordKeys, type LockKeys } from './keys.js';
import { slotsOf, type HoldMode } from './mode.js';
import { parseEnterReply, parseFlagReply, type EnterReply } from './replies.js';
import { runScript } from './script.js';
import { ENTER, EXTEND_HOLDER, LEAVE } from './scripts.js';

export type { EnterReply } from './replies.js';
/** Until config and the views import it from lock/mode.ts. */
export type { HoldMode } from './mode.js';

/**
 * How long a place in line lasts unless its waiter renews it (it does every third of this):
 * a waiter that dies leaves the line within it, and never blocks the ones behind it longer.
 */
export const PLACE_LEASE_MS = 5_000;
export const PLACE_RENEW_MS = Math.floor(PLACE_LEASE_MS / 3);

export interface EnterOptions {
  owner: string;
  ttlMs: number;
  meta: HolderMeta;
  mode: HoldMode;
  /** false: --no-wait (never queues). */
  join: boolean;
  timeoutMs: number;
  /** How long this dlock has waited so far (recorded in the history). */
  waitedMs: number;
  /** --once-per window (0: none): turned away when a run succeeded within it. */
  oncePerMs: number;
}

/** What `dlock run` tells a loss renewal about the holder, so the history names it. */
export interface LossRecord {
  host: string;
  pid: number;
  cmd: string;
  fence: string;
}

/** EXTEND/EXTEND_HOLDER ARGV[3..7]: record a refused renewal as a loss, or not. */
export function lossArgs(record: LossRecord | undefined): (string | number)[] {
  return record ? ['1', record.host, record.pid, record.cmd, record.fence] : ['0', '', '', '', ''];
}

export async function enterOn(instance: Instance, keys: LockKeys, options: EnterOptions): Promise<EnterReply> {
  const { owner, ttlMs, meta, mode } = options;
  const args = [
    owner,
    ttlMs,
    meta.host,
    meta.pid,
    meta.cmd,
    Date.now(),
    mode.kind,
    slotsOf(mode),
    options.join ? '1' : '0',
    PLACE_LEASE_MS,
    keys.wakePrefix,
    Math.round(options.waitedMs),
    Math.round(options.oncePerMs),
  ];
  const keyList = [...lineKeys(keys, keys.fence), ...recordKeys(keys)];
  return parseEnterReply(await withTimeout(runScript(instance.client, ENTER, keyList, args), options.timeoutMs), mode);
}

/**
 * Give up a place in line (a wait ran out or was interrupted); wakes whoever may enter now.
 * `record`: the history entry to append ("busy": the wait ran out, "left": interrupted, "": none).
 */
export async function leaveOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  timeoutMs: number,
  record: 'busy' | 'left' | '' = '',
  waitedMs = 0,
): Promise<boolean> {
  const [lock, , ...rest] = lineKeys(keys, '');
  return parseFlagReply(
    'leave',
    await withTimeout(
      runScript(
        instance.client,
        LEAVE,
        [lock, ...rest, keys.history],
        [owner, keys.wakePrefix, record, Math.round(waitedMs)],
      ),
      timeoutMs,
    ),
  );
}

/** Renew one holder of --slots/--shared: true renewed, false no longer held. */
export async function extendHolderOn(
  instance: Instance,
  keys: LockKeys,
  owner: string,
  ttlMs: number,
  timeoutMs: number,
  record?: LossRecord,
): Promise<boolean> {
  return parseFlagReply(
    'extend',
    await withTimeout(
      runScript(
        instance.client,
        EXTEND_HOLDER,
        [keys.lock, keys.holders, keys.history],
        [owner, ttlMs, ...lossArgs(record)],
        true,
      ),
      timeoutMs,
    ),
  );
}
