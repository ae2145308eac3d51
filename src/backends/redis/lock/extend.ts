// Single-instance extend: renew the lease only while we still own it.

import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { lossArgs, progressArgs, type LossRecord } from './line.js';
import { parseFlagReply } from './replies.js';
import { COMMON_CALLS, EXTEND } from './scripts.js';
import { type HolderProgress } from '../../../backend/holder.js';

export interface ExtendInput {
  owner: string;
  ttlMs: number;
  /** The holder as the history names it when the renewal is refused (undefined: record nothing). */
  record?: LossRecord;
  /** The job's --max-hold and last heartbeat, stored in the hash for status. */
  progress?: HolderProgress;
}

/**
 * lua/extend.lua: renew the exclusive lease while the owner matches. true: renewed; false: refused
 * (the lock is gone or someone else's; with `record`, the history says so). Throws on errors.
 */
export const extendScript = defineScript({
  name: 'extend',
  lua: EXTEND,
  commands: [...COMMON_CALLS, 'HGET', 'XADD', 'HINCRBY'],
  keys: (k: LockKeys) => [k.lock, k.history, k.totals],
  args: (i: ExtendInput) => [i.owner, i.ttlMs, ...lossArgs(i.record), ...progressArgs(i.progress)],
  parse: (reply) => parseFlagReply('extend', reply),
  evalFirst: true,
});
