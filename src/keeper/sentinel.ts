// Who tells the shell when its keeper dies. A keeper that is SIGKILLed (or crashes) can neither
// renew nor say so, and the section would run on with nothing renewing its lock. So the keeper
// starts a small sh that blocks reading a pipe only the keeper holds open: when the keeper
// ends, it kills the sh first; when the kernel closes the pipe instead (the keeper died), the
// sh logs a `lost` event and sends the watched process the --on-lost signal, as the keeper
// would have on a lost lock. It writes where the keeper writes: the caller's stderr, else
// keeper.log.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { onLostSignal } from '../child/loss.js';
import type { AcquireConfig, LogFormat } from '../config/index.js';
import { formatDuration } from '../duration.js';
import { Logger, type EventFields } from '../log.js';
import { runtimeDir } from '../runtime-dir.js';
import { keeperLogPath } from './runtime.js';

const SH = '/bin/sh';
/** $P pid, $S signal (empty: none), $T text line, else $J the JSON event after its ts fields. */
const SCRIPT = [
  'read -r _word',
  'if [ -n "$J" ]; then',
  "  set -- $(date -u '+%Y-%m-%dT%H:%M:%S.%3NZ %s%3N')",
  '  printf \'{"ts":"%s","ts_ms":%s,%s\\n\' "$1" "$2" "$J" >&2',
  'elif [ -n "$T" ]; then printf \'%s\\n\' "$T" >&2; fi',
  'if [ -n "$S" ]; then kill -s "$S" "$P" 2>/dev/null; fi',
].join('\n');

export interface Sentinel {
  /** The keeper ends by itself: the sentinel must not signal anyone. */
  dismiss(): void;
}

/** Start the sentinel for `watchPid`'s hold (its fence and the lease it runs on); undefined if it could not start. */
export function startSentinel(
  config: AcquireConfig,
  watchPid: number,
  hold: { fence: string; ttlMs: number },
  hasStderr: boolean,
): Sentinel | undefined {
  const signal = onLostSignal(config.onLost, config.stopSignal)?.slice('SIG'.length) ?? '';
  const logFile = hasStderr ? undefined : openKeeperLog();
  const format = hasStderr ? config.logFormat : 'json';
  const line = renderEvent(config, format, lostEvent(config, watchPid, hold, signal));
  let child: ChildProcess;
  try {
    child = spawn(SH, ['-c', SCRIPT], {
      stdio: ['pipe', 'ignore', hasStderr ? 'inherit' : (logFile ?? 'ignore')],
      env: { PATH: process.env.PATH, P: String(watchPid), S: signal, [format === 'json' ? 'J' : 'T']: line },
    });
  } catch {
    return undefined;
  } finally {
    if (logFile !== undefined) closeSync(logFile);
  }
  child.on('error', () => {});
  child.stdin?.on('error', () => {});
  child.unref();
  return { dismiss: () => child.kill('SIGKILL') };
}

/** The `lost` event the sentinel logs: the keeper died, `signal` goes to `watchPid`; the lease is the one applied. */
function lostEvent(
  config: AcquireConfig,
  watchPid: number,
  { fence, ttlMs }: { fence: string; ttlMs: number },
  signal: string,
): LostEvent {
  const unprotected = `pid ${watchPid} keeps running unprotected (--on-lost ignore)`;
  const what = signal ? `sending SIG${signal} to pid ${watchPid}` : unprotected;
  const died = `its keeper (pid ${process.pid}) died, so nothing renews it`;
  const expires = `it expires within ${formatDuration(ttlMs)}`;
  const sent = signal ? { signal: `SIG${signal}` } : {};
  return {
    message: `lost ${config.key} (fence ${fence}): ${died} and ${expires}; ${what}`,
    fields: { key: config.key, fence, reason: 'keeper-died', keeper_pid: process.pid, pid: watchPid, ...sent },
  };
}

interface LostEvent {
  message: string;
  fields: EventFields;
}

/** The event as the keeper's log would write it; in JSON, the object after its ts fields. */
function renderEvent(config: AcquireConfig, format: LogFormat, { message, fields }: LostEvent): string {
  if (config.verbosity === 'quiet') return '';
  let text = '';
  const log = new Logger(config.verbosity, format, { write: (written) => (text += written) }, false);
  log.event('lost', fields, message, 'warn');
  text = text.trimEnd();
  return format === 'json' ? text.replace(/^\{"ts":"[^"]*","ts_ms":[\d.]+,/, '') : text;
}

function openKeeperLog(): number | undefined {
  const dir = runtimeDir();
  try {
    return dir ? openSync(keeperLogPath(dir), 'a', 0o600) : undefined;
  } catch {
    return undefined;
  }
}
