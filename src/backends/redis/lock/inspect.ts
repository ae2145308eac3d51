// Read a lock's state on one instance without changing it (status, spinner, reentrancy).

import { AnsweredError } from '../client/client.js';
import { defineScript } from './define-script.js';
import type { LockKeys } from './keys.js';
import { INSPECT_MAX_BYTES } from './limits.js';
import { PLACE_LEASE_MS } from './limits.js';
import { parseForceReleaseReply, parseInspectReply, type InspectReply } from './replies.js';
import { FORCE_RELEASE, INSPECT, LINE_LIB_CALLS } from './scripts.js';

/** `holder`: the exclusive holder or the first of several; `counter`: the last token issued here ("0" if none yet). */
export type LockState = InspectReply;

/** lua/inspect.lua: the lock's holders, line and counter, read only. */
export const inspectScript = defineScript({
  name: 'inspect',
  lua: INSPECT,
  commands: [...LINE_LIB_CALLS, 'HGETALL'],
  keys: (k: LockKeys) => [k.lock, k.fence, k.holders, k.line, k.lineExpiry, k.lineInfo],
  args: () => [],
  parse: parseInspectReply,
  explain: tooLarge,
});

/** The script's refusal to send a forged lock of more than INSPECT_MAX_BYTES, in dlock's words. */
function tooLarge(error: unknown, keys: LockKeys): AnsweredError | undefined {
  if (!/^DLOCKTOOLARGE /.test(String((error as Error)?.message ?? ''))) return undefined;
  const mib = (bytes: number) => `${Math.ceil(bytes / 1024 / 1024)} MiB`;
  return new AnsweredError(
    `the lock ${keys.lock} holds more than ${mib(INSPECT_MAX_BYTES)} in its fields, holders and first waiters ` +
      '(dlock writes a few KiB): delete its keys if nothing needs them, or use another key or --prefix',
  );
}

export interface ForceReleaseInput {
  /** Delete at once, else keep each removed hold closed until its lease runs out. */
  now: boolean;
  /** Only that holder of --slots (undefined: every holder). */
  slot?: number;
  /** Who forces it, for the history. */
  host: string;
  pid: number;
}

/**
 * lua/force-release.lua: take the lock from whoever holds it (`release --force`; with `slot`, only
 * that holder of --slots); replies whom it removed. `now`: delete; else keep each removed hold
 * closed until its lease runs out.
 */
export const forceReleaseScript = defineScript({
  name: 'force-release',
  lua: FORCE_RELEASE,
  commands: [...LINE_LIB_CALLS, 'HGETALL', 'ZADD'],
  keys: (k: LockKeys) => [k.lock, k.released, k.holders, k.line, k.lineExpiry, k.lineInfo, k.history, k.totals],
  args: (i: ForceReleaseInput, k) => [
    i.now ? 'now' : 'close',
    i.slot === undefined ? '' : String(i.slot),
    k.wakePrefix,
    i.host,
    i.pid,
    PLACE_LEASE_MS,
  ],
  parse: parseForceReleaseReply,
});
