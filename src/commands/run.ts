// dlock run: hold the lock, run the command under it, wait for it, release; exit with the
// command's status (etcdctl's lock command over a Session and a Mutex).

import { constants as os } from 'node:os';
import { ChildSignals } from '../child/child-signals.js';
import { resolveCommand } from '../child/command-path.js';
import { SignalRelay } from '../child/signal-relay.js';
import { spawnChild } from '../child/spawn.js';
import { superviseChild } from '../child/supervise.js';
import type { Env, RunConfig } from '../config.js';
import { LockLostError } from '../errors.js';
import { Hold } from '../hold/hold.js';
import { isHeldBy } from '../hold/reentrant.js';
import { Logger } from '../log.js';
import type { LockSet } from '../lockset/lockset.js';
import { openLockSet } from '../lockset/open.js';
import { disconnectAll } from '../redis/client.js';

export async function run(config: RunConfig, env: Env): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const [file, ...args] = config.command;
  resolveCommand(file, env.PATH); // 127/126 before any lock is taken
  const signals = new SignalRelay();
  let set: LockSet | undefined;
  try {
    const parentToken = env.DLOCK_KEY === config.key && env.DLOCK_TOKEN ? env.DLOCK_TOKEN : undefined;
    set = await openLockSet(config, config.key, config.ttlMs, undefined, config.mode);
    if (parentToken && (await isHeldBy(set, parentToken))) return await runUnderParent(config, env, file, args, signals, log);

    const hold = await Hold.acquire(set, config, log, signals.interrupted);
    if (!hold) return interruptedStatus(signals.interrupted);
    // How the run ended, for the history and --once-per ("" if the command never started).
    let exitStatus = '';
    try {
      // A lease already gone or about to be (a starved machine, a slow WAIT): do not start the command.
      if (hold.lost.aborted) throw new LockLostError(`lost the lock ${config.key} before the command started: ${hold.lossReason!.message}`);
      const child = await spawnChild(file, args, {
        ...process.env,
        DLOCK_KEY: config.key,
        DLOCK_FENCING_TOKEN: hold.fence,
        DLOCK_TOKEN: hold.owner,
        DLOCK_TTL_MS: String(config.ttlMs),
        ...(config.slotted ? { DLOCK_SLOT: String(hold.slot ?? 0) } : {}),
      });
      const status = await superviseChild(child, signals, hold.lost, { log, lock: { key: config.key, fence: hold.fence }, onLost: config.onLost, killAfterMs: config.killAfterMs, ttlMs: hold.ttlMs });
      exitStatus = hold.lost.aborted ? 'lost' : String(status);
      if (hold.lost.aborted) throw new LockLostError(`lost the lock ${config.key} while the child ran: ${hold.lossReason!.message}`);
      return status;
    } finally {
      await hold.release(exitStatus);
    }
  } finally {
    signals.dispose();
    if (set) disconnectAll(set.instances);
  }
}

/** A nested `dlock run` on the key its parent dlock holds: run under the parent's lock, no deadlock. */
async function runUnderParent(config: RunConfig, env: Env, file: string, args: string[], signals: SignalRelay, log: Logger): Promise<number> {
  log.event('acquired', { key: config.key, fence: env.DLOCK_FENCING_TOKEN, reentrant: true }, `${config.key} is already held by the calling dlock; running under it`);
  const child = await spawnChild(file, args, process.env);
  const toChild = new ChildSignals(child, log, { key: config.key, fence: env.DLOCK_FENCING_TOKEN }, config.killAfterMs);
  signals.forwardTo((signal) => toChild.send(signal, 'forwarded'));
  return await child.exited;
}

function interruptedStatus(interrupted: AbortSignal): number {
  return 128 + (os.signals[interrupted.reason as NodeJS.Signals] ?? 0);
}
