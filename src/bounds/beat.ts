// `dlock heartbeat [key]`: tell the dlock this process runs under that the job makes progress,
// by touching the heartbeat file it named in DLOCK_HEARTBEAT_FILE (heartbeat-file.ts). No
// Redis, no parsing of other options: src/entry.ts runs it before the rest of dlock loads.
// Exit codes (docs/reference/exit-codes.md): 0 delivered (or nothing asked for heartbeats), 64
// not under a dlock, 76 the dlock no longer holds the lock or holds another key.

import { lutimesSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import { EXIT } from '../errors.js';
import { enclosingEntries, HEARTBEAT_ENCLOSING_ENV, HEARTBEAT_FILE_ENV, isHeartbeatPath } from './heartbeat-file.js';

export interface BeatResult {
  code: number;
  /** The one "dlock: " line, when it failed. */
  message?: string;
}

/** Deliver one heartbeat for `key` (default: the key of the dlock this process runs under). */
export function beat(key: string | undefined, env: Record<string, string | undefined>): BeatResult {
  const held = env.DLOCK_KEY;
  if (!held || !env.DLOCK_TOKEN) {
    return {
      code: EXIT.usage,
      message:
        'heartbeat: not under a dlock (no DLOCK_KEY and DLOCK_TOKEN): run it from the command of ' +
        '`dlock run --heartbeat D`, or after eval "$(dlock acquire --heartbeat D ...)"',
    };
  }
  if (key !== undefined && key !== held) {
    const message =
      `heartbeat: ${JSON.stringify(key)} is not held here ` + `(the calling dlock holds ${JSON.stringify(held)})`;
    return { code: EXIT.lost, message };
  }
  const file = env[HEARTBEAT_FILE_ENV];
  // Under a dlock without --heartbeat: nothing is watching, and a job may heartbeat either way.
  if (file === undefined || file === '') return { code: 0 };
  if (!basename(file).startsWith('heartbeat-')) {
    return { code: EXIT.usage, message: `heartbeat: ${HEARTBEAT_FILE_ENV} is not a dlock heartbeat file` };
  }
  // The enclosing dlocks' files too: each checked as a heartbeat path before any is touched.
  const enclosing = enclosingEntries(env[HEARTBEAT_ENCLOSING_ENV]);
  if (!enclosing.every(isHeartbeatPath)) {
    return {
      code: EXIT.usage,
      message:
        `heartbeat: ${HEARTBEAT_ENCLOSING_ENV} lists a path that is not a dlock heartbeat file ` +
        '(absolute, named heartbeat-*): nothing touched',
    };
  }
  let failed: BeatResult | undefined;
  for (const path of [file, ...enclosing]) {
    const result = touch(path, held, path === file);
    failed ??= result;
  }
  return failed ?? { code: 0 };
}

/** Touch one heartbeat file: undefined when done, else the 76 to report (every file is tried). */
function touch(file: string, held: string, own: boolean): BeatResult | undefined {
  try {
    // lutimes: never follows a symlink swapped in, never opens the file (a FIFO cannot block it).
    const time = new Date();
    lutimesSync(file, time, time);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' || code === 'ENOTDIR'
        ? 'its heartbeat file is gone: the dlock has ended'
        : `its heartbeat file could not be touched (${code ?? 'error'})`;
    const whose = own ? `the dlock holding ${JSON.stringify(held)}` : 'an enclosing dlock';
    const holds = own ? 'no longer holds it' : 'no longer holds its lock';
    return { code: EXIT.lost, message: `heartbeat: ${whose} ${holds}: ${why}` };
  }
}

/**
 * `dlock heartbeat` or `dlock heartbeat <key>` as the whole command line: its exit code, after
 * writing its line (text, or a JSON "error" event with DLOCK_LOG_FORMAT=json). Undefined for
 * anything else (options, --help): the full CLI handles it.
 */
export function heartbeatFastPath(argv: string[], env: Record<string, string | undefined>): number | undefined {
  if (argv[0] !== 'heartbeat' || argv.length > 2 || (argv.length === 2 && argv[1].startsWith('-'))) return undefined;
  const { code, message } = beat(argv[1], env);
  if (message) {
    const ts = Date.now();
    const line =
      env.DLOCK_LOG_FORMAT === 'json'
        ? JSON.stringify({ ts: new Date(ts).toISOString(), ts_ms: ts, event: 'error', exit_code: code, message })
        : `dlock: ${message}`;
    try {
      writeSync(2, `${line}\n`);
    } catch {
      // stderr closed: the exit code still says it.
    }
  }
  return code;
}
