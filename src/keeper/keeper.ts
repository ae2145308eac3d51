// The keeper: the detached process `dlock acquire` leaves behind. It takes the lock itself, so
// the lock never passes between processes (no gap, nothing left behind if either dies), tells
// the foreground, and renews it until the watched process exits (and the background steps it
// left are gone: ./section.ts) or a signal says stop; on a lost lock it stops the watched process
// (or those steps) as --on-lost says, as `dlock run` stops its command (../child/loss.ts:
// SIGTERM, then SIGKILL when the grace ends).

import { BOUND_EXIT, JobBounds } from '../bounds/bounds.js';
import { enclosingHeartbeats, type HeartbeatFile } from '../bounds/heartbeat-file.js';
import { heartbeatFile } from '../bounds/make.js';
import type { ChildSignals } from '../child/child-signals.js';
import { lossResponse, respondToLoss } from '../child/loss.js';
import type { AcquireConfig } from '../config/index.js';
import { DlockError, EXIT } from '../errors.js';
import { Hold } from '../hold/hold.js';
import type { LossReason } from '../hold/lease.js';
import { heldVariables } from '../hold/variables.js';
import { type Backend, type LockHandle, openBackend } from '../backend/index.js';
import { exitFields } from '../untrusted.js';
import { KeeperLogger } from './log.js';
import { ACK, failedReport, sendReport, STOP_SIGNAL, type KeeperRequest } from './protocol.js';
import { removeFile, removeKeeperNotes, takeSectionStatus, writeKeeperFile, writeKeeperEnding } from './runtime.js';
import { stopForBound } from './bound-stop.js';
import { sectionScope, sectionSignals } from './section.js';
import { startSentinel, type Sentinel } from './sentinel.js';
import { watchProcess } from './watch.js';
import { startupOver } from '../jit.js';

type Ending =
  | { why: 'watched-exited' }
  /** TERM, INT, HUP: release and exit (once the watched process is gone: stop its background steps first). */
  | { why: 'signal'; signal: NodeJS.Signals }
  /**
   * USR2 (not USR1: Node's debugger), from `dlock release`: stop renewing and exit; the releaser releases
   * (owner-checked).
   */
  | { why: 'stop' }
  | { why: 'foreground-gone' }
  | { why: 'lost' }
  /** --max-hold or --heartbeat: stop the watched process, then release. */
  | { why: 'bound' };

const RELEASING: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

export async function keep(config: AcquireConfig, request: KeeperRequest): Promise<number> {
  const log = KeeperLogger.create(config.verbosity, config.logFormat, request.stderr);
  if (config.monitor) (await import('../monitor/monitor.js')).startMonitor(config.monitor, config.key, log, 'keeper');
  // Read before the shell can exit: where its background steps are found once it has (./section.ts).
  const scope = sectionScope(request.watchPid);
  const ending = new AbortController();
  // The watched process has exited and its background steps hold the lock: what ends that.
  const afterShell = new AbortController();
  // The owner token once held: a keeper that ends the section itself says so beside its pid file.
  let owner: string | undefined;
  const end = (reason: Ending) => {
    const next = ending.signal.aborted ? afterShell : ending;
    if (next.signal.aborted) return;
    // A `dlock release` meanwhile (a trap on EXIT) leaves the release and the status to this keeper.
    if (owner !== undefined && SELF_ENDINGS.has(reason.why)) writeKeeperEnding(owner, reason.why);
    next.abort(reason);
  };
  const watch = watchProcess(request.watchPid);
  watch.gone.addEventListener('abort', () => end({ why: 'watched-exited' }));
  const handlers = new Map<NodeJS.Signals, () => void>([
    ...RELEASING.map((signal) => [signal, () => end({ why: 'signal', signal })] as const),
    [STOP_SIGNAL, () => end({ why: 'stop' })],
  ]);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  const ack = readAck();
  void ack.then((ok) => !ok && end({ why: 'foreground-gone' }));
  let backend: Backend | undefined;
  let lock: LockHandle | undefined;
  let pidFile: string | undefined;
  let reported = false;
  // Tells the watched process if this keeper dies; dismissed on every ending but a crash.
  let sentinel: Sentinel | undefined;
  let crashed = false;
  let heartbeat: HeartbeatFile | undefined;
  let bounds: JobBounds | undefined;
  try {
    // Made before the lock is taken: no runtime directory to make it in fails first.
    if (config.heartbeatMs !== undefined) heartbeat = heartbeatFile();
    backend = await openBackend(config, { ttlMs: config.ttlMs });
    lock = backend.lock(config.key, { mode: config.mode });
    const hold = await Hold.acquire(lock, config, log, ending.signal);
    if (!hold) {
      reported = true;
      const reason = ending.signal.reason as Ending;
      sendReport({ kind: 'interrupted', signal: reason.why === 'signal' ? reason.signal : undefined });
      return 0;
    }
    pidFile = writeKeeperFile(hold.owner);
    owner = hold.owner;
    sentinel = startSentinel(config, request.watchPid, hold, request.stderr);
    reported = true;
    const variables = heldVariables(config, hold, heartbeat?.path);
    // The enclosing dlocks' heartbeat files (a `dlock heartbeat` reaches them too), the shortest interval.
    if (heartbeat) Object.assign(variables, enclosingHeartbeats(process.env, config.heartbeatMs!));
    const delivered = sendReport({ kind: 'held', variables });
    // The section runs from here on, for as long as it takes: JavaScriptCore's normal JIT policy.
    startupOver();
    // The variables never reached the caller: nobody will release this lock.
    if (!delivered || !(await Promise.race([ack, aborted(ending.signal).then(() => false)]))) {
      await hold.release();
      return 0;
    }
    if (hold.lost.aborted) end({ why: 'lost' });
    else hold.lost.addEventListener('abort', () => end({ why: 'lost' }), { once: true });
    // The section's commands start now: --heartbeat counts from here.
    if (config.maxHoldMs !== undefined || heartbeat) {
      bounds = new JobBounds({ ...config, heldSince: hold.heldSince, heartbeat });
      hold.reportProgress(bounds.progress.bind(bounds));
      bounds.exceeded.addEventListener('abort', () => end({ why: 'bound' }), { once: true });
    }
    const watched = sectionSignals(config, request.watchPid, { token: hold.owner, fence: hold.fence }, scope, log);
    await aborted(ending.signal);
    let reason = ending.signal.reason as Ending;
    // Told to stop just as it began to end the section itself: it ends it (the release saw its note).
    const own = afterShell.signal.reason as Ending | undefined;
    if (reason.why === 'stop' && own && SELF_ENDINGS.has(own.why)) reason = own;
    // Set once the watched process has exited: resolves when its background steps are gone (or abandoned).
    let background: Promise<void> | undefined;
    const abandon = new AbortController();
    if (reason.why === 'watched-exited') {
      // Nobody is left for the sentinel to tell if this keeper dies (and the pid may be reused).
      sentinel?.dismiss();
      sentinel = undefined;
      background = watched.finish(undefined, abandon.signal);
      const next = await Promise.race([background, aborted(afterShell.signal)]).then(
        () => afterShell.signal.reason as Ending | undefined,
      );
      if (next) reason = next;
    }
    bounds?.stop();
    // The processes stopped (SIGTERM; SIGKILL when the grace ends) are gone: what the watched process
    // started too, as `dlock run` waits for its command's.
    const stopped = async () => {
      if (background) return background;
      await Promise.race([watched.settled(), aborted(watch.gone)]);
      await watched.finish();
    };
    if (reason.why === 'stop') {
      // `dlock release` releases (and records) it; the section's status is what it left here, if anything.
      // Background steps still running run on unprotected: the section's owner ended it.
      abandon.abort();
      await background;
      const status = takeSectionStatus(hold.owner);
      await hold.detach();
      handedOver(config.key, hold.fence, status === undefined ? UNKNOWN : String(status), log);
      return 0;
    }
    if (reason.why === 'bound') {
      // Stopped first (SIGTERM; SIGKILL when the grace ends), then released: the next holder never overlaps it.
      const exceeded = bounds!.reason!;
      stopForBound(watched, config, request.watchPid, hold.fence, exceeded, log);
      await stopped();
      await hold.release(String(BOUND_EXIT), exceeded.kind);
      return 0;
    }
    if (reason.why === 'signal' && background) {
      // Only background steps are left: stopped as `dlock run` stops its command's, then released.
      watched.send('SIGTERM', 'forwarded');
      watched.killLater(config.killAfterMs);
      await stopped();
    }
    const signalled = reason.why === 'lost' && stopWatched(config, request.watchPid, hold, watched, !!background, log);
    // The keeper is not the shell's parent: how the section ended cannot be known (never a success).
    await hold.release(reason.why === 'lost' ? 'lost' : UNKNOWN);
    // After SIGTERM, its grace: SIGKILL follows unless they exit first. With --on-lost ignore, nothing is waited for.
    if (signalled) await stopped();
    abandon.abort();
    await background;
    return 0;
  } catch (error) {
    crashed = reported;
    if (reported) throw error;
    const failure =
      error instanceof DlockError
        ? error
        : new DlockError(
            `internal error: ${error instanceof Error ? error.message.split('\n')[0] : String(error)} (a bug: ` +
              'please report it)',
            EXIT.internal,
          );
    sendReport(failedReport(failure));
    return failure.exitCode;
  } finally {
    if (!crashed) sentinel?.dismiss();
    removeFile(pidFile);
    if (lock) removeKeeperNotes(lock.owner);
    bounds?.stop();
    heartbeat?.remove();
    watch.stop();
    for (const [signal, handler] of handlers) process.off(signal, handler);
    process.stdin.destroy();
    backend?.close();
  }
}

/** Endings this keeper brings about itself: a `dlock release` that comes meanwhile leaves the section to it. */
const SELF_ENDINGS = new Set<Ending['why']>(['bound', 'lost', 'signal']);

/** The exit status of a section that ended without `dlock release --exit-status`. */
const UNKNOWN = 'unknown';

/**
 * `dlock release` ends the section: it releases the lock (and says how that went); this keeper's
 * `released` event carries the section's status for its pings and hooks.
 */
function handedOver(key: string, fence: string, exit: string, log: KeeperLogger): void {
  const text = `${key} (fence ${fence}) is released by dlock release; the section's exit status: ${exit}`;
  log.event('released', { key, fence, released: true, by: 'release', ...exitFields(exit) }, text);
}

/**
 * The lock is lost: say why, and stop the watched process (its background steps, once it is `gone`)
 * as --on-lost says (../child/loss.ts). Whether a signal was sent.
 */
function stopWatched(
  config: AcquireConfig,
  pid: number,
  hold: Hold,
  watched: ChildSignals,
  gone: boolean,
  log: KeeperLogger,
): boolean {
  const reason = hold.lossReason as LossReason;
  const response = lossResponse(config.onLost, reason, config.stopSignal);
  const { signal } = response;
  const whom = gone ? `what pid ${pid} left running` : `pid ${pid}`;
  const what = signal ? `sending ${signal} to ${whom}` : `${whom} keeps running unprotected (--on-lost ignore)`;
  log.event(
    'lost',
    { key: config.key, fence: hold.fence, reason: reason.kind, pid, ...(signal ? { signal } : {}) },
    `lost ${config.key} (fence ${hold.fence}): ${reason.message}; ${what}`,
  );
  respondToLoss(watched, response, reason, hold.ttlMs);
  return signal !== undefined;
}

/** Resolves true once the foreground wrote "ok" on stdin, false when stdin ended without it. */
function readAck(): Promise<boolean> {
  return new Promise((resolve) => {
    let text = '';
    const stdin = process.stdin;
    const done = (ok: boolean) => {
      stdin.removeAllListeners('data');
      resolve(ok);
    };
    stdin.setEncoding('utf8');
    stdin.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes(ACK)) done(true);
    });
    stdin.once('end', () => done(text.includes(ACK)));
    stdin.once('error', () => done(false));
  });
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}
