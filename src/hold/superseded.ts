// --supersede: the one line a waiter prints when a newer --supersede waiter took its place in line.

import type { RunConfig } from '../config/index.js';
import { notObtained, type NotObtainedError } from '../errors.js';
import { pidNumber, type Superseder } from '../backend/index.js';
import { printable } from '../untrusted.js';
import { serverTime } from './once-per.js';

/** The conflict error (-E, default 75; silent with -E 0 unless --verbose) of a waiter superseded in line. */
export function supersededInLine(
  config: Pick<RunConfig, 'key' | 'conflictExitCode' | 'verbosity'>,
  by: Superseder,
  waitedMs: number,
): NotObtainedError {
  const pid = pidNumber(by);
  const who = by.host ? printable(by.host) + (pid === undefined ? '' : ` (pid ${pid})`) : 'a waiter that names no host';
  const cmd = by.cmd ? `, running ${printable(by.cmd)}` : '';
  const at = by.atMs === undefined ? '' : ` at ${serverTime(by.atMs)}`;
  const message = `${config.key}: superseded in line by ${who}${cmd}, which joined${at}; not run`;
  return notObtained(
    config,
    { event: 'superseded', message },
    {
      key: config.key,
      waited_ms: waitedMs,
      // Flat, as the history names who did it (by_host, by_pid): `by` is a word in other events.
      by_host: by.host,
      by_pid: pid ?? null,
      by_cmd: by.cmd,
      by_at_ms: by.atMs ?? null,
    },
  );
}
