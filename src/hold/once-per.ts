// --once-per: the one line a run turned away in a window another run already succeeded in
// says where and when that run succeeded, and until when the key is done (server time).

import type { RunConfig } from '../config/index.js';
import { formatDuration } from '../duration.js';
import { notObtained, type NotObtainedError } from '../errors.js';
import { type DoneMark, pidNumber } from '../backend/index.js';

/**
 * The conflict error (-E, default 75; silent with -E 0 unless --verbose) for a key done this
 * window.
 */
export function doneThisWindow(
  config: Pick<RunConfig, 'key' | 'conflictExitCode' | 'verbosity' | 'keyOptions'>,
  done: DoneMark,
  waitedMs: number,
): NotObtainedError {
  const where = done.host
    ? `on ${done.host}${done.pid ? ` (pid ${done.pid})` : ''}`
    : 'somewhere (the mark names no host)';
  const started = done.startedMs === undefined ? '' : `, started ${serverTime(done.startedMs)}`;
  const took =
    done.startedMs !== undefined && done.finishedMs !== undefined
      ? `, took ${formatDuration(done.finishedMs - done.startedMs)}`
      : '';
  const finished = done.finishedMs === undefined ? 'at an unknown time' : `at ${serverTime(done.finishedMs)}`;
  const { oncePerMs } = config.keyOptions;
  const window = oncePerMs ? ` (--once-per ${formatDuration(oncePerMs)})` : '';
  // A mark that outlasts every date was not set by a run: still done (never run twice), and the way out named.
  const until =
    done.untilMs === undefined
      ? `a time past any date (delete ${done.where ?? 'its done mark'} to run again)`
      : // Rounded up: a second already past is no "until" (the JSON event's `until` has the ms).
        serverTime(Math.ceil(done.untilMs / 1000) * 1000);
  const message =
    `${config.key} is done until ${until}${window}: it last succeeded ${finished} ${where}${started}${took}; ` +
    'not run (server time)';
  return notObtained(
    config,
    { event: 'done', message },
    {
      key: config.key,
      waited_ms: waitedMs,
      until: isoOrNull(done.untilMs),
      until_ms: done.untilMs ?? null,
      // Typed as everywhere (json-schema.json): a pid a number, null when the mark holds none.
      last: {
        host: done.host,
        pid: pidNumber(done) ?? null,
        cmd: done.cmd,
        fence: done.fence,
        started: isoOrNull(done.startedMs),
        started_ms: done.startedMs ?? null,
        finished: isoOrNull(done.finishedMs),
        finished_ms: done.finishedMs ?? null,
      },
    },
  );
}

/** A server time (ms) as ISO 8601 UTC, to the second. */
export function serverTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function isoOrNull(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}
