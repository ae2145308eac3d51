// dlock acquire: take the lock without a command and print the section's variables (flock's
// fd mode, etcdctl lock without a command). With a keeper (the default) the lock is taken by a
// detached keeper process started here, which renews it afterwards (../keeper/launch.ts,
// ../keeper/keeper.ts); this process relays its answer and exits as soon as the lock is held.
// --no-keeper takes it here and leaves it to expire unless `dlock renew` extends it.

import { signalStatus } from '../child/exit-status.js';
import { SignalRelay } from '../child/signal-relay.js';
import type { AcquireConfig, Env } from '../config/index.js';
import { DlockError, EXIT } from '../errors.js';
import { Hold } from '../hold/hold.js';
import { enclosingLock, nestedTokens } from '../config/enclosing.js';
import { formatVariables, heldVariables, holdVariables, withHeld } from '../hold/variables.js';
import { acquireWithKeeper } from '../keeper/launch.js';
import { writeStdoutNow } from '../output.js';
import { Logger } from '../log.js';
import { type Backend, openBackend, type ParentLease } from '../backend/index.js';

/** Print the variables of a lock taken here or by a keeper; or those of the caller's, already held. */
export async function acquire(config: AcquireConfig, argv: string[], env: Env): Promise<number> {
  if (config.monitor) {
    const log = new Logger(config.verbosity, config.logFormat);
    const role = config.keeper ? 'foreground' : 'run';
    (await import('../monitor/monitor.js')).startMonitor(config.monitor, config.key, log, role);
  }
  if (await heldByCaller(config, env)) return 0;
  return config.keeper ? acquireWithKeeper(config, argv, env) : acquireWithoutKeeper(config, env);
}

/** Take the lock here, print, and leave it held until its lease runs out. */
async function acquireWithoutKeeper(config: AcquireConfig, env: Env): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const signals = new SignalRelay();
  let backend: Backend | undefined;
  try {
    backend = await openBackend(config, { ttlMs: config.ttlMs });
    const hold = await Hold.acquire(backend.lock(config.key, { mode: config.mode }), config, log, signals.interrupted);
    if (!hold) return signalStatus(signals.interrupted.reason as NodeJS.Signals);
    await hold.detach();
    if (!writeStdoutNow(formatVariables(withHeld(heldVariables(config, hold), env), config.format))) {
      await hold.release();
      throw new DlockError(`could not write the variables to stdout; ${config.key} was released`, EXIT.internal);
    }
    return 0;
  } finally {
    signals.dispose();
    backend?.close();
  }
}

/**
 * Inside a section (or a `dlock run`) that holds this key already (DLOCK_KEY, or an entry of
 * DLOCK_HELD), with the same Redis: print its variables again and take nothing (as a nested
 * `dlock run` runs under its parent's lock), with its token added to DLOCK_NESTED so that this
 * section's `dlock release` releases nothing either.
 */
async function heldByCaller(config: AcquireConfig, env: Env): Promise<boolean> {
  const parent = enclosingLock(env, config.key);
  if (!parent) return false;
  const { token } = parent;
  const slot = parent.slot || undefined;
  const backend = await openBackend(config, { ttlMs: config.ttlMs });
  let held: ParentLease | undefined;
  try {
    const lock = backend.lock(config.key, { mode: config.mode, owner: token });
    held = await lock.heldBy({ key: config.key, command: 'acquire', slot });
    if (!held) {
      (await import('../keeper/ended.js')).refuseIfTakenAway(config.key, token, 'acquire');
      return false;
    }
  } finally {
    backend.close();
  }
  // What the server records for the enclosing hold comes first; the environment only fills in.
  const fence = held.fence || parent.fence;
  const log = new Logger(config.verbosity, config.logFormat);
  log.event(
    'acquired',
    { key: config.key, fence, reentrant: true },
    `${config.key} is already held by the caller; printing its variables`,
  );
  const lock = { key: config.key, token, ttlMs: held.ttlMs ?? (parent.ttlMs || String(config.ttlMs)) };
  // DLOCK_NESTED: this section's `dlock release` leaves the lock to the holder that took it.
  const nested = [...new Set([...nestedTokens(env), token])].join(' ');
  const variables = withHeld({ ...holdVariables(lock, { fence, slot: slot || undefined }), DLOCK_NESTED: nested }, env);
  if (!writeStdoutNow(formatVariables(variables, config.format)))
    throw new DlockError('could not write the variables to stdout', EXIT.internal);
  return true;
}
