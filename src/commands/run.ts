// dlock run: acquire, run the child while the lease renews, release; exit with the child's status.

import { constants as os, hostname } from 'node:os';
import { spawnChild } from '../child/spawn.js';
import { resolveCommand } from '../child/command-path.js';
import type { Env, RunConfig } from '../config.js';
import { formatDuration } from '../duration.js';
import { LockLostError, UnavailableError } from '../errors.js';
import { Lease, type LossReason } from '../hold/lease.js';
import type { HolderMeta } from '../lock/acquire.js';
import { Logger } from '../log.js';
import { disconnectAll } from '../redis/client.js';
import type { LockSet } from '../lockset/lockset.js';
import { obtain } from '../lockset/obtain.js';
import { openLockSet, unavailable } from '../lockset/open.js';
import { RedundancyWatch } from '../lockset/redundancy.js';
import { releaseAll } from '../lockset/release.js';
import { schedulingMarginMs } from '../lockset/quorum.js';
import { POLL_CAP_MS } from '../lockset/waiter.js';
import { SignalRelay } from '../child/signal-relay.js';
import { now } from '../timeout.js';
import { ChildSignals } from '../child/child-signals.js';
import { logOutage, logOutageOver, logRedundancy } from '../hold/warnings.js';
import { expiresText, reportRelease } from '../hold/release-report.js';
import { isHeldBy } from '../hold/reentrant.js';
import { syncReplicas } from '../hold/sync-replicas.js';
import { WaitDisplay } from '../hold/wait-display.js';

export async function run(config: RunConfig, env: Env): Promise<number> {
  const log = new Logger(config.verbosity, config.logFormat);
  const [file, ...args] = config.command;
  resolveCommand(file, env.PATH); // 127/126 before any lock is taken
  const signals = new SignalRelay();
  let set: LockSet | undefined;
  try {
    const reentrant = env.DLOCK_KEY === config.key && env.DLOCK_TOKEN ? env.DLOCK_TOKEN : undefined;
    set = await openLockSet(config, config.key, config.ttlMs);
    if (reentrant && (await isHeldBy(set, reentrant))) {
      log.event('acquired', { key: config.key, fence: env.DLOCK_FENCING_TOKEN, reentrant: true }, `${config.key} is already held by the calling dlock; running under it`);
      const child = await spawnChild(file, args, process.env);
      const toChild = new ChildSignals(child, log, { key: config.key, fence: env.DLOCK_FENCING_TOKEN }, config.killAfterMs);
      signals.forwardTo((signal) => toChild.send(signal, 'forwarded'));
      return await child.exited;
    }
    return await runLocked(config, set, file, args, signals, log);
  } finally {
    signals.dispose();
    if (set) disconnectAll(set.instances);
  }
}

async function runLocked(config: RunConfig, set: LockSet, file: string, args: string[], signals: SignalRelay, log: Logger): Promise<number> {
  const meta: HolderMeta = { host: hostname(), pid: process.pid, cmd: config.holderCmd };
  const display = new WaitDisplay(config, set, log);
  const result = await obtain(set, meta, {
    waitMs: config.waitMs,
    signal: signals.interrupted,
    onWait: (waitedMs) => display.waiting(waitedMs),
    onOutage: (errors) => logOutage(log, config.key, config.waitMs, errors),
    onOutageOver: () => logOutageOver(log, config.key),
    onPollOnly: (errors) => logPollOnly(log, config.key, errors),
  }).finally(() => display.stop());

  if (result.kind === 'unavailable') throw notAcquiredInOutage(config, set, result);
  if (result.kind !== 'acquired' && result.unreleased.length > 0) logNotUndone(log, config, result.unreleased);
  if (result.kind === 'busy') throw await display.notObtained(result.waitedMs);
  if (result.kind === 'aborted') return interruptedStatus(signals.interrupted);

  const { fence } = result;
  let lease: Lease | undefined;
  try {
    if (signals.interrupted.aborted) return interruptedStatus(signals.interrupted);
    log.event('acquired', { key: config.key, fence, waited_ms: result.waitedMs }, `acquired ${config.key} (fence ${fence}, waited ${formatDuration(result.waitedMs)})`);
    const redundancy = new RedundancyWatch();
    logRedundancy(log, config.key, fence, set.total, redundancy.observe(result.failures));
    // Renew from the moment we hold it: --sync-replicas may wait longer than the TTL.
    lease = new Lease(set, result.startedAt, config.killAfterMs, {
      renewed: (failures, retaken) => {
        log.event('renewed', { key: config.key, fence }, `renewed ${config.key} (fence ${fence})`);
        if (retaken.length > 0) logRetaken(log, config.key, fence, retaken);
        logRedundancy(log, config.key, fence, set.total, redundancy.observe(failures));
      },
      renewFailed: (errors) => log.event('renew-failed', { key: config.key, fence, error: errors.join('; ') }, `renewing ${config.key} failed: ${errors.join('; ')}`),
    }, { fence, meta, sinceMs: Date.now() - (now() - result.startedAt) });
    if (config.syncReplicas > 0) await syncReplicas(set, config.syncReplicas, config.connectTimeoutMs);
    // A signal during the WAIT for replicas aborted nothing yet: do not start the child at all.
    if (signals.interrupted.aborted) return interruptedStatus(signals.interrupted);
    // Nor when the lease is already gone or about to be (a starved machine, a slow WAIT).
    if (lease.lost.aborted) {
      throw new LockLostError(`lost the lock ${config.key} before the command started: ${(lease.lost.reason as LossReason).message}`);
    }
    const child = await spawnChild(file, args, {
      ...process.env,
      DLOCK_KEY: config.key,
      DLOCK_FENCING_TOKEN: fence,
      DLOCK_TOKEN: set.owner,
      DLOCK_TTL_MS: String(config.ttlMs),
    });
    const toChild = new ChildSignals(child, log, { key: config.key, fence }, config.killAfterMs);
    const forward = (signal: NodeJS.Signals, terminating: boolean) => {
      toChild.send(signal, 'forwarded');
      if (terminating) toChild.killLater(config.killAfterMs);
    };
    signals.forwardTo(forward);
    // One that came while the child was being spawned was taken as "interrupted": pass it on.
    if (signals.interrupted.aborted) forward(signals.interrupted.reason as NodeJS.Signals, true);
    const onLost = () => {
      const reason = lease!.lost.reason as LossReason;
      // The lease's timer fired so late (dlock stalled) that the kill deadline has passed: no
      // time is left for a SIGTERM grace.
      const stalled = reason.kind === 'expiring' && reason.deadline - now() <= 0 && config.onLost !== 'ignore';
      const late = reason.lateMs === undefined ? {} : { late_ms: Math.round(reason.lateMs) };
      log.event('lost', { key: config.key, fence, reason: reason.kind, ...late }, `lost ${config.key} (fence ${fence}): ${reason.message}; ${stalled ? 'killing the child' : onLostText(config.onLost)}`);
      if (stalled) {
        toChild.send('SIGKILL', 'lost');
        log.event(
          'stalled',
          { key: config.key, fence, ...late },
          `dlock itself was stalled: its deadline timer fired ${Math.round(reason.lateMs ?? 0)}ms late, past the moment the command had to be gone; killed it at once (SIGKILL), but it may have run past the lease`,
        );
      } else if (config.onLost === 'kill') toChild.send('SIGKILL', 'lost');
      else if (config.onLost === 'term') {
        toChild.send('SIGTERM', 'lost');
        // Past the scheduling margin a late SIGKILL may come after the lease ended: say so.
        toChild.killLater(reason.deadline - now(), reason.kind === 'expiring' ? schedulingMarginMs(set.ttlMs) : Infinity);
      }
    };
    // Lost while the child was being spawned: the event has fired already.
    if (lease.lost.aborted) onLost();
    else lease.lost.addEventListener('abort', onLost, { once: true });

    const status = await child.exited.finally(() => toChild.cancel());
    if (lease.lost.aborted) {
      throw new LockLostError(`lost the lock ${config.key} while the child ran: ${(lease.lost.reason as LossReason).message}`);
    }
    return status;
  } finally {
    const expiresBy = lease?.expiresBy ?? now() + config.ttlMs;
    await lease?.stop();
    const releases = await releaseAll(set);
    reportRelease(log, releases, { key: config.key, fence, total: set.total, lost: lease?.lost.aborted ?? false, expiresInMs: expiresBy - now() });
  }
}

/** 69: Redis was unreachable; when a wait ran out during an outage, say so (it is not "busy"). */
function notAcquiredInOutage(config: RunConfig, set: LockSet, result: { errors: string[]; outageMs?: number; unreleased: string[] }): UnavailableError {
  const { message } = unavailable(set.total, result.errors);
  // A hold whose reply was lost that could not be undone stays until its TTL runs out: say so.
  const undone = result.unreleased.length > 0 ? `; could not undo the attempt on ${result.unreleased.join('; ')} (a lock it took there expires by itself ${expiresText(config.ttlMs)})` : '';
  if (result.outageMs === undefined || config.waitMs === undefined) return new UnavailableError(`${message}${undone}`);
  return new UnavailableError(`${config.key} not acquired within ${formatDuration(config.waitMs)}: Redis was unreachable for the last ${formatDuration(result.outageMs)} (${message})${undone}`);
}

/** A failed attempt (busy, interrupted) whose undo failed somewhere: one warning line. */
function logNotUndone(log: Logger, config: RunConfig, unreleased: string[]): void {
  log.event(
    'release-failed',
    { key: config.key, instance: unreleased.map((entry) => entry.slice(0, entry.indexOf(': '))).join(' '), error: unreleased.join('; '), expires_in_ms: config.ttlMs },
    `could not undo the attempt on ${config.key} on ${unreleased.join('; ')} (a lock it took there expires by itself ${expiresText(config.ttlMs)})`,
  );
}

/** Waiting without the release channel: one warning, then polling alone. */
function logPollOnly(log: Logger, key: string, errors: string[]): void {
  log.event('poll-only', { key, error: errors.join('; ') }, `cannot subscribe to ${key}'s release channel (${errors.join('; ')}); waiting by polling, so a release is noticed within ${formatDuration(POLL_CAP_MS)} instead of at once`);
}

function logRetaken(log: Logger, key: string, fence: string, retaken: string[]): void {
  log.event(
    'retaken',
    { key, fence, instances: retaken.join(' ') },
    `${key} was gone from ${retaken.join(', ')} (a restart without persistence, an eviction) and is held there again: re-taken while a majority still held it (fence raised to ${fence})`,
  );
}

function onLostText(onLost: RunConfig['onLost']): string {
  return onLost === 'ignore' ? 'the child keeps running unprotected (--on-lost ignore)' : onLost === 'kill' ? 'killing the child' : 'terminating the child';
}

function interruptedStatus(interrupted: AbortSignal): number {
  return 128 + (os.signals[interrupted.reason as NodeJS.Signals] ?? 0);
}

