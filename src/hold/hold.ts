// Holding one lock, apart from what is done under it (etcd's Session + Mutex): acquire it,
// waiting in line as long as asked; keep it renewed and report its loss through `lost`; release
// it after stopping renewal and waiting for the renewal in flight. `dlock run` holds a lock
// while its command runs; any other command that holds one uses this too.

import { hostname } from 'node:os';
import type { AcquireConfig, RunConfig } from '../config/index.js';
import { formatDuration } from '../duration.js';
import { UnavailableError, UsageError } from '../errors.js';
import {
  failureText,
  type HolderMeta,
  type HolderKind,
  type HolderProgress,
  type HoldMode,
  type LockHandle,
  MODES,
  type NotObtained,
  RedundancyWatch,
  slotsOf,
  unavailable,
  unreadable,
} from '../backend/index.js';
import type { Logger } from '../log.js';
import { now } from '../clock.js';
import { osUser } from '../user.js';
import { Lease, type LossReason } from './lease.js';
import { expiresText, reportRelease } from './release-report.js';
import { doneThisWindow } from './once-per.js';
import { supersededInLine } from './superseded.js';
import { WaitDisplay } from './wait-display.js';
import {
  logNotLeft,
  logNotUndone,
  logOutage,
  logOutageOver,
  logPollOnly,
  logRedundancy,
  logRetaken,
  warnTwoInstances,
} from './warnings.js';

/** What holding a lock needs from the command's options. */
export type HoldConfig = Pick<
  RunConfig,
  | 'key'
  | 'ttlMs'
  | 'waitMs'
  | 'killAfterMs'
  | 'syncReplicas'
  | 'connectTimeoutMs'
  | 'holderCmd'
  | 'conflictExitCode'
  | 'verbosity'
  | 'logFormat'
  | 'keyOptions'
  | 'reason'
> &
  Partial<Pick<AcquireConfig, 'keeper'>> & {
    /** `dlock hold`: a holder with no process (no end: until unhold; or its --until). */
    hold?: { forever: boolean; untilMs?: number };
  };

export class Hold {
  private lease: Lease | undefined;

  private constructor(
    private readonly lock: LockHandle,
    private readonly config: HoldConfig,
    private readonly log: Logger,
    /** The fencing token of this hold. */
    readonly fence: string,
    /** --slots: the slot held (0 … n−1). */
    readonly slot: number | undefined,
    /** Monotonic ms since when the lock is held: the start of the round that took it (--max-hold counts from it). */
    readonly heldSince: number,
    /** The store's own variables for this holder (Obtained.env): etcd's ETCD_LOCK_KEY and ETCD_LOCK_REV. */
    readonly storeEnv: Record<string, string>,
  ) {}

  /**
   * Acquire `lock`, waiting as `config.waitMs` says, and start renewing it (and, with
   * --sync-replicas, wait for the replicas). Throws the busy (75) or unavailable (69) error;
   * resolves to undefined, with nothing held, when `interrupted` aborted the wait or came
   * before the hold was ready. `whileWaiting` is called each time a wait for the lock goes on
   * (dlock run makes its command ready then).
   */
  static async acquire(
    lock: LockHandle,
    config: HoldConfig,
    log: Logger,
    interrupted: AbortSignal,
    whileWaiting?: () => void,
  ): Promise<Hold | undefined> {
    // --no-keeper: this process exits once the lock is held, and nothing else holds it: no pid.
    const meta: HolderMeta = {
      host: hostname(),
      pid: config.keeper === false || config.hold ? '' : process.pid,
      cmd: config.holderCmd,
      ...(config.reason === undefined ? {} : { reason: config.reason }),
      user: osUser(),
      ...(config.hold ? { hold: config.hold } : {}),
    };
    warnTwoInstances(log, config.key, lock.caps);
    const display = new WaitDisplay(config, lock, log);
    const result = await lock
      .obtain(meta, {
        waitMs: config.waitMs,
        keyOptions: config.keyOptions,
        signal: interrupted,
        onWait: (waitedMs, place) => {
          // The "waiting" event first (written before the display's first await), so its
          // waited_ms is true at its ts_ms: making the command ready takes a spawn's milliseconds.
          const shown = display.waiting(waitedMs, place);
          whileWaiting?.();
          return shown;
        },
        onOutage: (errors) => logOutage(log, lock.caps, config.key, config.waitMs, errors),
        onOutageOver: () => logOutageOver(log, lock.caps, config.key),
        onPollOnly: (errors) => logPollOnly(log, lock.caps, config.key, errors),
      })
      .finally(() => display.stop());

    // The holder could not be read (a wait, whatever it shows): the words of -n's error.
    if (result.kind === 'unavailable' && result.unreadable) throw unreadable(config.key, result.errors);
    if (result.kind === 'unavailable') throw notAcquiredInOutage(config, lock, result);
    if (result.kind === 'mismatch') throw inUseOtherwise(config.key, lock.mode, result);
    // The lease the store applied to the attempt (etcd: whole seconds, at least its minimum), not the one asked.
    const attempt = { key: config.key, ttlMs: lock.ttlMs };
    if (result.kind !== 'acquired' && result.unreleased.length > 0) logNotUndone(log, attempt, result.unreleased);
    if (result.kind === 'busy') throw await display.notObtained(result.waitedMs);
    if (result.kind === 'done') throw doneThisWindow(config, result.done, result.waitedMs);
    if (result.kind === 'superseded') throw supersededInLine(config, result.by, result.waitedMs);
    if (result.kind === 'aborted') {
      if (result.notLeft) logNotLeft(log, lock.caps, config.key, result.notLeft);
      return undefined;
    }

    const { fence, slot } = result;
    const hold = new Hold(lock, config, log, fence, slot, result.startedAt, result.env ?? {});
    try {
      if (interrupted.aborted) return await hold.releasedFor(undefined);
      const slotText = slot === undefined ? '' : `, slot ${slot}`;
      // A store that applies more than --ttl (etcd: whole seconds, at least its minimum) says so.
      const raised =
        lock.ttlMs > config.ttlMs ? `; ${lock.caps.store} applied a ${formatDuration(lock.ttlMs)} lease` : '';
      log.event(
        'acquired',
        {
          key: config.key,
          fence,
          waited_ms: result.waitedMs,
          ttl_ms: lock.ttlMs,
          ...MODES[lock.mode.kind].holderFields(slot),
        },
        `acquired ${config.key} (fence ${fence}${slotText}, waited ${formatDuration(result.waitedMs)}${raised})`,
      );
      const redundancy = new RedundancyWatch();
      logRedundancy(log, lock.caps, config.key, fence, redundancy.observe(result.failures));
      // Renew from the moment we hold it: --sync-replicas may wait longer than the TTL.
      hold.lease = new Lease(lock, result.startedAt, config.killAfterMs, {
        renewed: (failures, retaken) => {
          log.event('renewed', { key: config.key, fence }, `renewed ${config.key} (fence ${fence})`);
          if (retaken.length > 0) logRetaken(log, config.key, fence, retaken);
          logRedundancy(log, lock.caps, config.key, fence, redundancy.observe(failures));
        },
        renewFailed: (errors) =>
          log.event(
            'renew-failed',
            { key: config.key, fence, error: errors.join('; ') },
            `renewing ${config.key} failed: ${errors.join('; ')}`,
          ),
      });
      if (config.syncReplicas > 0) await lock.syncReplicas(config.syncReplicas, config.connectTimeoutMs);
      // A signal during the WAIT for replicas aborted nothing yet: the hold is not used at all.
      if (interrupted.aborted) return await hold.releasedFor(undefined);
      return hold;
    } catch (error) {
      await hold.release();
      throw error;
    }
  }

  /**
   * DLOCK_SLOT when --slots was given (`slotted`): the slot granted; --slots 1 is a plain lock,
   * whose one holder has the one slot, 0.
   */
  slotVariable(slotted: boolean): number | undefined {
    if (!slotted) return undefined;
    return this.slot ?? 0;
  }

  /** From now on each renewal stores what `progress` says about the job (for status). */
  reportProgress(progress: () => HolderProgress): void {
    if (this.lease) this.lease.progress = progress;
  }

  /** Aborts with a LossReason when the lock is lost (renewal refused, or failing until too late). */
  get lost(): AbortSignal {
    return this.lease?.lost ?? NEVER;
  }

  /** The loss, once `lost` has aborted. */
  get lossReason(): LossReason | undefined {
    return this.lease?.lost.aborted ? (this.lease.lost.reason as LossReason) : undefined;
  }

  /** The owner token (DLOCK_TOKEN): a nested dlock on the same key runs under this hold. */
  get owner(): string {
    return this.lock.owner;
  }

  /** The lease this hold runs on: the one the store applied (LockHandle.ttlMs), which may exceed --ttl. */
  get ttlMs(): number {
    return this.lock.ttlMs;
  }

  /**
   * Stop renewing, wait for the renewal in flight (a release must not race it), then release
   * on every instance (each retried until --connect-timeout) and say how that went. After a
   * loss the renewals have retried these servers already and the lock frees itself when the
   * lease ends: one attempt, bounded by what is left of the lease, so the caller is not held.
   * `exitStatus`: how the run ended ("0" … "255", "lost"; "" when no command ran): the history
   * records it, and "0" with --once-per marks the key done for the window. `reason`: why dlock
   * ended the job ("max-hold", "heartbeat-missed"), recorded beside it.
   */
  /**
   * Release, recording `exitStatus` (dlock's: 124 for a job it stopped), `reason` (why it stopped it)
   * and `commandExit` (the command's own status then, when known).
   */
  async release(exitStatus = '', reason = '', commandExit = ''): Promise<void> {
    const expiresBy = this.lease?.expiresBy ?? now() + this.ttlMs;
    await this.lease?.stop();
    const lost = this.lease?.lost.aborted ?? false;
    // One instance records the release (with the run's exit status) in the same script call.
    const record = this.lock.caps.history
      ? { exitStatus, reason, commandExit, oncePerMs: this.config.keyOptions.oncePerMs ?? 0 }
      : undefined;
    const leftMs = this.lease ? this.lease.endsAt - now() : 0;
    const afterLoss = lost ? { boundMs: Math.max(RELEASE_FLOOR_MS, leftMs), retry: false } : {};
    const releases = await this.lock.release({ record, fence: this.fence, ...afterLoss });
    const { key } = this.config;
    const { fence, lock } = this;
    const expiresInMs = expiresBy - now();
    const ended = { exit: exitStatus, reason, commandExit };
    reportRelease(this.log, releases, { key, fence, caps: lock.caps, lost, expiresInMs, ...ended });
  }

  /** Stop renewing and leave the lock held until its lease runs out (acquire --no-keeper). */
  async detach(): Promise<void> {
    await this.lease?.stop();
  }

  private async releasedFor<T>(value: T): Promise<T> {
    await this.release();
    return value;
  }
}

/** The time one release attempt gets after a loss even when the lease has ended (it records the run). */
const RELEASE_FLOOR_MS = 10;

/** A signal that never aborts: the lost signal of a hold not renewing yet. */
const NEVER = new AbortController().signal;

/** 64: the key is in use in the other mode, or with another number of slots. */
function inUseOtherwise(
  key: string,
  mode: HoldMode,
  used: { usedAs: HolderKind; slots: number; holders: number; waiters: number },
): UsageError {
  const how = MODES[used.usedAs].usedAs(used.slots);
  const who = used.holders > 0 ? `${used.holders} holding` : `${used.waiters} waiting`;
  const asked = MODES[mode.kind].askedFor(slotsOf(mode));
  // The kind counted to n (--slots) is the one whose number must agree.
  const counted = MODES[used.usedAs].flag.argument ? used.usedAs : mode.kind;
  const same = `use the same --${counted} on every dlock of one key`;
  return new UsageError(`${key} is in use ${how} (${who}); this run asked for ${asked}: ${same}`);
}

/** 69: the store was unreachable; when a wait ran out during an outage, say so (it is not "busy"). */
function notAcquiredInOutage(
  config: Pick<HoldConfig, 'key' | 'waitMs'>,
  lock: LockHandle,
  result: NotObtained & { kind: 'unavailable' },
): UnavailableError {
  const { message } = unavailable(lock.caps, result.errors);
  // A hold whose reply was lost that could not be undone stays until its TTL runs out: say so.
  const undone =
    result.unreleased.length > 0
      ? `; could not undo the attempt on ${result.unreleased.map(failureText).join('; ')} (a lock it took there ` +
        `expires by itself ${expiresText(lock.ttlMs)})`
      : '';
  if (result.outageMs === undefined || config.waitMs === undefined) return new UnavailableError(`${message}${undone}`);
  return new UnavailableError(
    // When the outage ended is said: the wait's end (the store may answer again by the time this is read).
    `${config.key} not acquired within ${formatDuration(config.waitMs)}: ${lock.caps.store} was unreachable ` +
      'for the last ' +
      `${formatDuration(result.outageMs)} of the wait, until it ran out (${message})${undone}`,
  );
}
