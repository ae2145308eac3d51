// Acquire, waiting as long as the user asked: --no-wait, --wait <d>, or forever.

import { now, sleep } from '../../clock.js';
import type { Attempt, Undo } from './acquire.js';
import type { LockSet } from './lockset.js';
import type { NotObtained, ObtainFailure as Failed, ObtainOptions, Obtained } from '../../backend/backend.js';
import { quorumSize } from './quorum.js';
import { releaseAll, releaseFailures } from './release.js';
import { strategyOf } from './strategy.js';
import { busyRetryMs, ReleaseWatcher } from './waiter.js';
import type { HolderMeta } from '../../backend/holder.js';

/**
 * On one instance (a server, Sentinel, Cluster) waiters queue in line (FIFO, see the line
 * scripts); Redlock (several instances) has no line: each attempt races the others.
 */
export async function obtain(set: LockSet, meta: HolderMeta, options: ObtainOptions): Promise<Obtained | NotObtained> {
  let undo: Undo | undefined;
  const strategy = strategyOf(set);
  const replyLost = { value: false };
  const startedAt = now();
  // --supersede: the ticket the line gave this wait, sent with each attempt (a newer one supersedes it).
  const line = { ticket: '0' };
  const recorded = () => ({ waitedMs: now() - startedAt, keyOptions: options.keyOptions, ticket: line.ticket });
  // Once waiting, each attempt gets only what the wait has left (attemptTimeoutMs): a Redis that
  // came back but does not answer yet would otherwise hold the last one up to --connect-timeout
  // past the wait's end. The first attempt (all that -n makes) keeps the whole timeout.
  const deadline = options.waitMs === undefined ? Infinity : startedAt + options.waitMs;
  const within = (): LockSet => ({ ...set, timeoutMs: attemptTimeoutMs(set.timeoutMs, deadline - now()) });
  const tryOnce = async (waiting: boolean) => {
    const context = { join: options.waitMs !== 0, replyLost, recorded };
    const attempt = await strategy.tryOnce(waiting ? within() : set, meta, context);
    if (attempt.kind === 'busy' && attempt.ticket !== undefined && attempt.ticket !== '0') line.ticket = attempt.ticket;
    return attempt;
  };
  const result = await attempts(set, options, tryOnce, (next) => {
    // A retry still sent by the last undo could delete the hold this new attempt takes.
    undo?.stop();
    undo = next;
  });
  if (result.kind === 'acquired') {
    undo?.stop();
    return result;
  }
  const { leave } = strategy;
  if (leave) {
    // Give up our place at once (the one behind us may enter), and a hold a lost reply took.
    // (ENTER took a waiter turned away as done, or superseded, out of line already.) The history records why.
    const record = result.kind === 'busy' ? 'busy' : result.kind === 'aborted' ? 'left' : '';
    // Past a --wait, leaving and undoing get an attempt's floor: the place lapses, an undone hold expires.
    const bounded = within();
    const undoing = replyLost.value ? releaseAll(bounded, { boundMs: bounded.timeoutMs }) : Promise.resolve([]);
    const outOfLine = result.kind === 'done' || result.kind === 'superseded';
    const leaving = outOfLine ? Promise.resolve(undefined) : leave(bounded, record, result.waitedMs);
    const [notLeft, released] = await Promise.all([leaving, undoing]);
    const unreleased = releaseFailures(released);
    // A grant missing to leave the line (+hdel, +zrem) is an error like any other, never busy;
    // interrupted, the signal's status stands and the caller warns.
    if (notLeft?.permanent && result.kind === 'aborted') return { ...result, unreleased, notLeft };
    if (notLeft?.permanent) {
      // The same failure once (a key of another type fails the attempt and the leaving alike).
      const known = result.kind === 'unavailable' ? result.errors : [];
      const same = known.some(({ label, reason }) => label === notLeft.label && reason === notLeft.reason);
      const errors = same ? known : [...known, notLeft];
      return { kind: 'unavailable', errors, waitedMs: result.waitedMs, unreleased };
    }
    return { ...result, unreleased };
  }
  return { ...result, unreleased: undo ? releaseFailures(await undo.done) : [] };
}

async function attempts(
  set: LockSet,
  options: ObtainOptions,
  tryOnce: (waiting: boolean) => Promise<Attempt>,
  undoing: (undo: Undo | undefined) => void,
): Promise<Obtained | Failed> {
  const start = now();
  const deadline = options.waitMs === undefined ? Infinity : start + options.waitMs;
  // Once the lock was found busy, a wait longer than --connect-timeout outlasts an outage
  // (a restart, a failover); before that, an unreachable Redis is 69 within --connect-timeout.
  const waitOutlastsOutages = options.waitMs === undefined || options.waitMs > set.connectTimeoutMs;
  let watcher: ReleaseWatcher | undefined;
  let unavailableSince: number | undefined;
  let outageRetries = 0;
  let outageReported = false;
  try {
    for (;;) {
      undoing(undefined);
      const sentAt = now();
      const attempt = await tryOnce(watcher !== undefined || unavailableSince !== undefined);
      if (attempt.kind === 'busy' || attempt.kind === 'unavailable') undoing(attempt.undo);
      // One reading of the clock decides and reports: a wait given up as run out says it
      // waited at least --wait (two readings could say 399ms and give up at 400).
      const at = now();
      const waitedMs = Math.round(at - start);
      if (attempt.kind !== 'unavailable') {
        if (outageReported) options.onOutageOver?.();
        unavailableSince = undefined;
        outageRetries = 0;
        outageReported = false;
      }
      if (attempt.kind === 'acquired') return { ...attempt, waitedMs };
      if (attempt.kind === 'mismatch') return { ...attempt, waitedMs };
      if (attempt.kind === 'done' || attempt.kind === 'superseded') return { ...attempt, waitedMs };
      if (options.signal.aborted) return { kind: 'aborted', waitedMs };
      if (attempt.kind === 'unavailable') {
        // Unreachable since this attempt was sent, at the latest.
        unavailableSince ??= sentAt;
        const outageMs = Math.round(at - unavailableSince);
        const ridingOut = watcher !== undefined && waitOutlastsOutages;
        const final = attempt.errors.some(({ permanent }) => permanent);
        const { errors } = attempt;
        if (final || (!ridingOut && outageMs >= set.connectTimeoutMs)) return { kind: 'unavailable', errors, waitedMs };
        if (at >= deadline) return { kind: 'unavailable', errors, waitedMs, ...(ridingOut ? { outageMs } : {}) };
        if (ridingOut && !outageReported && outageMs >= set.connectTimeoutMs) {
          outageReported = true;
          options.onOutage?.(attempt.errors);
        }
        const pauseMs = Math.min(outageRetryMs(set, outageRetries++), deadline - now());
        // A reconnect or a release message ends the pause early.
        await (watcher ? watcher.next(pauseMs, options.signal) : sleep(pauseMs, options.signal));
        continue;
      }
      // Busy and not in line (place 0: --no-wait, or a per-key option that keeps it out of the line): final.
      if (at >= deadline || attempt.place === 0) return { kind: 'busy', waitedMs };
      if (!watcher) {
        // Subscribe only once the lock is found busy (the common uncontended run pays nothing),
        // then try again at once: a release between the attempt and the subscription is not missed.
        const channel = strategyOf(set).wakeChannel(set);
        watcher = await ReleaseWatcher.start(set, channel, set.timeoutMs, options.onPollOnly);
        continue;
      }
      // A subscription that lied leaves too few instances to trust: the instance failed (69).
      if (set.total - watcher.failures.length < quorumSize(set.total))
        return { kind: 'unavailable', errors: watcher.failures, waitedMs };
      const refused = await options.onWait?.(waitedMs, attempt.place);
      if (refused && refused.length > 0) return { kind: 'unavailable', errors: refused, waitedMs, unreadable: true };
      await watcher.next(Math.min(busyRetryMs(attempt.retryInMs), Math.max(0, deadline - now())), options.signal);
    }
  } finally {
    // Closing the subscriptions costs the event loop a quarter to half a millisecond: let the
    // caller report the lock and start the command first (a message meanwhile sets a flag).
    const subscribed = watcher;
    if (subscribed) setImmediate(() => subscribed.stop());
  }
}

/** The least time an attempt gets, however little the wait has left: a healthy server answers well within it. */
export const ATTEMPT_FLOOR_MS = 250;

/** One attempt's timeout: the instance's, capped to what the wait has left (but ATTEMPT_FLOOR_MS at least). */
export function attemptTimeoutMs(timeoutMs: number, leftMs: number): number {
  return Math.min(timeoutMs, Math.max(ATTEMPT_FLOOR_MS, Math.ceil(leftMs)));
}

/**
 * Pause between attempts while too few instances answer: short at first (a blip), then
 * backing off to 2s (an outage), jittered so waiters do not retry in step.
 */
export function outageRetryMs(set: Pick<LockSet, 'timeoutMs'>, retries: number, random = Math.random()): number {
  const first = Math.max(10, Math.min(set.timeoutMs, 250));
  return Math.round(Math.min(first * 2 ** Math.min(retries, 10), OUTAGE_RETRY_CAP_MS) * (0.5 + random));
}

export const OUTAGE_RETRY_CAP_MS = 2_000;
