// dlock run: hold the lock, run the command under it, wait for it, release; exit with the
// command's status (etcdctl's lock command over a Session and a Mutex).

import { BOUND_EXIT, JobBounds } from '../bounds/bounds.js';
import { enclosingHeartbeats, HEARTBEAT_FILE_ENV, type HeartbeatFile } from '../bounds/heartbeat-file.js';
import { signalStatus } from '../child/exit-status.js';
import { prepareChild, type PreparedChild } from '../child/launcher.js';
import { resolveCommand } from '../child/command-path.js';
import { SignalRelay } from '../child/signal-relay.js';
import { spawnChild, type OutputCapture } from '../child/spawn.js';
import { superviseChild } from '../child/supervise.js';
import type { Env, RunConfig } from '../config/index.js';
import { now } from '../clock.js';
import { LockLostError } from '../errors.js';
import { enclosingLock, type EnclosingLock } from '../config/enclosing.js';
import { MAX_DURATION_MS, MIN_TTL_MS } from '../config/options.js';
import { Hold } from '../hold/hold.js';
import type { Lease, LossReason } from '../hold/lease.js';
import { keepEnclosingLease } from '../hold/nested-lease.js';
import { enclosedEnv, holdVariables, lockVariables, type SectionGrant, type SectionLock } from '../hold/variables.js';
import { startupOver } from '../jit.js';
import { Logger } from '../log.js';
import { type Backend, openBackend, type ParentLease } from '../backend/index.js';

export async function run(config: RunConfig, env: Env): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  // --ping-output: the command's output goes through dlock, its tail kept for the final ping.
  const outputBytes = config.monitor?.pingOutputBytes;
  const tail =
    outputBytes === undefined ? undefined : new (await import('../monitor/output-tail.js')).OutputTail(outputBytes);
  if (config.monitor)
    (await import('../monitor/monitor.js')).startMonitor(config.monitor, config.key, log, 'run', tail);
  const [file, ...args] = config.command;
  resolveCommand(file, env.PATH); // 127/126 before any lock is taken
  const signals = new SignalRelay();
  let backend: Backend | undefined;
  // null: tried, and the command is spawned when granted (see launcher.ts).
  let prepared: PreparedChild | null | undefined;
  let heartbeat: HeartbeatFile | undefined;
  let bounds: JobBounds | undefined;
  try {
    // An enclosing dlock's lock on this key (DLOCK_KEY, else DLOCK_HELD): a hint the server confirms.
    const parent = enclosingLock(env, config.key);
    backend = await openBackend(config, { ttlMs: config.ttlMs });
    const slot = parent?.slot || undefined;
    const nested = { key: config.key, command: 'run', slot } as const;
    const held = parent && (await backend.lock(config.key, { mode: config.mode, owner: parent.token }).heldBy(nested));
    if (parent && held) return await runUnderParent(config, env, file, args, signals, log, backend, parent, held, tail);
    // Its enclosing lock is gone: 76 unless its owner ended that section here (loaded only then: crypto).
    if (parent) (await import('../keeper/ended.js')).refuseIfTakenAway(config.key, parent.token, 'run');

    // --heartbeat: its file exists before the lock is taken (a runtime directory that is not ours fails first).
    heartbeat = config.heartbeatMs === undefined ? undefined : (await import('../bounds/make.js')).heartbeatFile();
    const handle = backend.lock(config.key, { mode: config.mode });
    // DLOCK_TTL_MS is the lease the store applied (etcd: whole seconds, at least its minimum), which the
    // handle has once it asked for it: while waiting already, as a wait holds its place on that lease.
    const sectionLock = (): SectionLock => ({
      key: config.key,
      token: handle.owner,
      ttlMs: handle.ttlMs,
      heartbeatFile: heartbeat?.path,
      heartbeatMs: config.heartbeatMs,
    });
    // Waiting for the lock: make the command ready meanwhile, so it starts as soon as granted.
    let readyTtlMs: number | undefined;
    const prepare = () => {
      readyTtlMs = handle.ttlMs;
      return prepareChild(file, args, commandEnv(config, env, sectionLock())) ?? null;
    };
    // Not with --ping-output: the waiting shell would have the caller's stdout and stderr.
    const ready = tail ? undefined : () => (prepared ??= prepare());
    const hold = await Hold.acquire(handle, config, log, signals.interrupted, ready);
    if (!hold) return interruptedStatus(signals.interrupted);
    const lock = sectionLock();
    // Made ready with another lease than the grant's: its DLOCK_TTL_MS would be wrong, spawn anew.
    if (readyTtlMs !== undefined && readyTtlMs !== hold.ttlMs) prepared?.discard();
    // How the run ended, for the history and --once-per ("" if the command never started).
    let exitStatus = '';
    let commandExit = '';
    try {
      // A lease already gone or about to be (a starved machine, a slow WAIT): do not start the command.
      if (hold.lost.aborted)
        throw new LockLostError(`lost the lock ${config.key} before the command started: ${hold.lossReason!.message}`);
      const grant = { fence: hold.fence, slot: hold.slotVariable(config.slotted), store: hold.storeEnv };
      const child =
        prepared?.start(grant.fence, grant.slot, holdVariables(lock, grant).store) ??
        (await spawnChild(file, args, commandEnv(config, env, lock, grant), tail));
      startupOver();
      const bounded = config.maxHoldMs !== undefined || heartbeat !== undefined;
      bounds = bounded ? new JobBounds({ ...config, heldSince: hold.heldSince, heartbeat }) : undefined;
      if (bounds) hold.reportProgress(bounds.progress.bind(bounds));
      const status = await superviseChild(child, signals, hold.lost, {
        log,
        lock: { key: config.key, fence: hold.fence },
        onLost: config.onLost,
        killAfterMs: config.killAfterMs,
        stopSignal: config.stopSignal,
        ttlMs: hold.ttlMs,
        bounds,
        token: lock.token,
      });
      bounds?.stop();
      exitStatus = hold.lost.aborted ? 'lost' : String(status);
      if (hold.lost.aborted)
        throw new LockLostError(`lost the lock ${config.key} while the command ran: ${hold.lossReason!.message}`);
      if (bounds?.reason) {
        // dlock's outcome is 124; the command's own status (143 after SIGTERM) is recorded beside it.
        commandExit = String(status);
        exitStatus = String(BOUND_EXIT);
        return BOUND_EXIT;
      }
      return status;
    } finally {
      await hold.release(exitStatus, bounds?.reason?.kind, commandExit);
    }
  } finally {
    bounds?.stop();
    heartbeat?.remove();
    prepared?.discard();
    signals.dispose();
    backend?.close();
  }
}

/**
 * The command's environment: the caller's with the section variables, the caller's own locks in
 * DLOCK_HELD. Without `grant` (a command made ready while waiting) DLOCK_FENCING_TOKEN, DLOCK_SLOT
 * with --slots and the store's own variables are left out: the grant brings them (launcher.ts).
 */
function commandEnv(config: RunConfig, callerEnv: Env, lock: SectionLock, grant?: SectionGrant): NodeJS.ProcessEnv {
  // With --heartbeat: the enclosing dlocks' heartbeat files too, and the shortest interval of all.
  const heartbeat = lock.heartbeatMs === undefined ? {} : enclosingHeartbeats(callerEnv, lock.heartbeatMs);
  const env = enclosedEnv(callerEnv, { ...lockVariables(lock), ...heartbeat });
  delete env.DLOCK_FENCING_TOKEN;
  if (config.slotted) delete env.DLOCK_SLOT;
  if (!grant) return env;
  const { DLOCK_FENCING_TOKEN, DLOCK_SLOT, store } = holdVariables(lock, grant);
  return { ...env, ...store, DLOCK_FENCING_TOKEN, ...(DLOCK_SLOT === undefined ? {} : { DLOCK_SLOT }) };
}

/**
 * A nested `dlock run` on a key an enclosing dlock holds (`parent`, from DLOCK_KEY or DLOCK_HELD,
 * confirmed by the server as `held`): run under that lock, no deadlock. It keeps the lease alive
 * and watches it as a hold does (hold/nested-lease.ts: renewed under the parent's token every
 * ttl/3; lost, the command is stopped as --on-lost says and it exits 76), for a parent that
 * renews nothing (a `dlock acquire --no-keeper` section) as for one that does; it never releases
 * the lock: the holder that took it does. Its command's DLOCK_KEY … describe this key, the
 * caller's innermost lock moves into DLOCK_HELD. It supervises its own command as the parent does
 * (signals forwarded to the whole tree, SIGKILL after --kill-after) and enforces its own
 * --max-hold and --heartbeat, counted from its command's start: exceeded, the command is stopped
 * and it exits 124, leaving the lock to the parent (no release, no history). --heartbeat watches
 * the parent's heartbeat file when it has one (a `dlock heartbeat` counts for both), else a file
 * of its own.
 */
async function runUnderParent(
  config: RunConfig,
  env: Env,
  file: string,
  args: string[],
  signals: SignalRelay,
  log: Logger,
  backend: Backend,
  parent: EnclosingLock,
  held: ParentLease,
  tail: OutputCapture | undefined,
): Promise<number> {
  if (signals.interrupted.aborted) return interruptedStatus(signals.interrupted);
  const heartbeat =
    config.heartbeatMs === undefined
      ? undefined
      : (await import('../bounds/make.js')).nestedHeartbeatFile(env[HEARTBEAT_FILE_ENV]);
  let bounds: JobBounds | undefined;
  let lease: Lease | undefined;
  try {
    // What the server records for the enclosing hold comes first; the environment only fills in.
    const fence = held.fence || parent.fence;
    const { key } = config;
    const fallbackTtlMs = validTtl(Number(parent.ttlMs)) ?? config.ttlMs;
    lease = await keepEnclosingLease(
      backend,
      { key, token: parent.token, fence, lease: held, fallbackTtlMs },
      config.connectTimeoutMs,
      config.killAfterMs,
      log,
    );
    log.event(
      'acquired',
      { key, fence, reentrant: true },
      `${key} is already held by the calling dlock; running under it`,
    );
    const slot = parent.slot || undefined;
    const ttl = String(lease.ttlMs);
    const variables = { DLOCK_KEY: key, DLOCK_TOKEN: parent.token, DLOCK_FENCING_TOKEN: fence, DLOCK_TTL_MS: ttl };
    const childEnv = enclosedEnv(env, { ...variables, DLOCK_SLOT: slot });
    if (heartbeat?.own) {
      // A file of its own: the caller's (when it watches one) and those enclosing it are listed beside it.
      childEnv[HEARTBEAT_FILE_ENV] = heartbeat.file.path;
      const { DLOCK_HEARTBEAT_ENCLOSING, DLOCK_HEARTBEAT_MS } = enclosingHeartbeats(env, config.heartbeatMs!);
      childEnv.DLOCK_HEARTBEAT_MS = DLOCK_HEARTBEAT_MS;
      if (DLOCK_HEARTBEAT_ENCLOSING === undefined) delete childEnv.DLOCK_HEARTBEAT_ENCLOSING;
      else childEnv.DLOCK_HEARTBEAT_ENCLOSING = DLOCK_HEARTBEAT_ENCLOSING;
    } else if (heartbeat) {
      // The caller's file, shared: the bound is its own or the caller's when that is shorter.
      childEnv.DLOCK_HEARTBEAT_MS = String(heartbeatWithin(config.heartbeatMs!, env));
    }
    const startedAt = now();
    const child = await spawnChild(file, args, childEnv, tail);
    startupOver();
    if (config.maxHoldMs !== undefined || heartbeat) {
      bounds = new JobBounds({ ...config, heldSince: startedAt, heartbeat: heartbeat?.file });
    }
    const status = await superviseChild(child, signals, lease.lost, {
      log,
      lock: { key, fence },
      onLost: config.onLost,
      killAfterMs: config.killAfterMs,
      stopSignal: config.stopSignal,
      ttlMs: lease.ttlMs,
      bounds,
      reentrant: true,
      // Its background processes carry the enclosing token: the lease is kept until they are gone
      // (under a --no-keeper lock nothing else would keep it).
      token: parent.token,
    });
    if (lease.lost.aborted) {
      const { message } = lease.lost.reason as LossReason;
      throw new LockLostError(`lost the lock ${key} while the command ran: ${message}`);
    }
    return bounds?.reason ? BOUND_EXIT : status;
  } finally {
    await lease?.stop();
    bounds?.stop();
    if (heartbeat?.own) heartbeat.file.remove();
  }
}

/** A nested run's --heartbeat, or the caller's (DLOCK_HEARTBEAT_MS) when it is shorter (the file is shared). */
function heartbeatWithin(ownMs: number, env: Env): number {
  const callerMs = Number(env.DLOCK_HEARTBEAT_MS);
  return Number.isInteger(callerMs) && callerMs > 0 ? Math.min(ownMs, callerMs) : ownMs;
}

/** A lease length from the environment, when it is one --ttl would take (MIN_TTL_MS up to MAX_DURATION_MS). */
function validTtl(ms: number): number | undefined {
  return Number.isInteger(ms) && ms >= MIN_TTL_MS && ms <= MAX_DURATION_MS ? ms : undefined;
}

function interruptedStatus(interrupted: AbortSignal): number {
  return signalStatus(interrupted.reason as NodeJS.Signals);
}
