// What a waiting dlock shows: a spinner on a terminal; otherwise (a pipe, CI) a status line
// when the wait starts and one every 30 s (text or json); and the one-line message when the
// lock was not obtained.

import { now as monotonicNow } from '../clock.js';
import { spinnerWanted, Spinner } from '../spinner.js';
import type { RunConfig } from '../config/index.js';
import { formatDuration } from '../duration.js';
import { notObtained, type NotObtainedError, UnavailableError } from '../errors.js';
import type { Logger } from '../log.js';
import { isClosed, type LockHandle, type MemberFailure, storeNow, slotsOf, unreadable } from '../backend/index.js';
import { type HolderSnapshot, refusedOf, snapshotOf } from '../views/snapshot.js';
import { describeSnapshot } from '../views/holder-text.js';
import { publicHolder } from '../views/instance-views.js';
import { hasNoProcess, pidAlive } from '../views/dead-pid.js';
import { recentHoldTimes, type TurnEstimate, turnEstimateMs } from './turn-estimate.js';

type DisplayConfig = Pick<RunConfig, 'key' | 'waitMs' | 'conflictExitCode' | 'verbosity' | 'logFormat' | 'keyOptions'>;

/** Without a spinner, how often a wait says it is still waiting. */
export const STATUS_EVERY_MS = 30_000;

export class WaitDisplay {
  private readonly spinner: Spinner | undefined;
  /** No spinner, not --quiet: status lines instead, so a wait in CI does not look hung. */
  private readonly statusLines: boolean;
  private stopped = false;
  private announced = false;
  private snapshot: HolderSnapshot | undefined;
  /** Monotonic ms (clock.ts) the wait started; every time here is monotonic but the holder's (server's clock). */
  private waitStartedAt: number | undefined;
  private ticker: NodeJS.Timeout | undefined;
  /** Our place in line (1 = next), when there is a line. */
  private place: number | undefined;
  /** Recent hold times from the key's history, read once when the wait starts (undefined until then). */
  private holdTimes: number[] | undefined;

  constructor(
    private readonly config: DisplayConfig,
    private readonly lock: LockHandle,
    private readonly log: Logger,
  ) {
    const quiet = config.verbosity === 'quiet' || config.logFormat === 'json';
    this.spinner = spinnerWanted(process.env, quiet) ? new Spinner(process.env) : undefined;
    this.statusLines = !this.spinner && config.verbosity !== 'quiet';
  }

  /** Show the wait; returns the instances that refused to say who holds the lock (a grant is missing). */
  async waiting(waitedMs: number, place?: number): Promise<MemberFailure[] | undefined> {
    if (!this.announced) {
      this.announced = true;
      const inLine = place ? ` (${this.inLine(place)})` : '';
      this.log.event(
        'waiting',
        { key: this.config.key, waited_ms: waitedMs, ...(place ? { place } : {}), ...this.priorityField() },
        `waiting for ${this.config.key}${inLine}`,
      );
    }
    this.place = place;
    this.waitStartedAt ??= monotonicNow() - waitedMs;
    // Whatever is shown (spinner, status lines, nothing): a holder that cannot be read (a grant
    // missing, a malformed reply) ends the wait as 69, as -n and a --wait that runs out do.
    const read = await this.lock.read();
    const refused = refusedOf(read);
    if (refused.length > 0) return refused;
    this.snapshot = snapshotOf(read) ?? this.snapshot;
    if (this.statusLines && !this.ticker) {
      // Not awaited: the wait goes on (and a release is heard) while the hold times are read.
      void this.statusLine('waiting for', false);
      this.ticker = setInterval(() => void this.statusLine('still waiting for'), STATUS_EVERY_MS).unref();
    }
    if (!this.spinner) return;
    this.holdTimes ??= await recentHoldTimes(this.lock);
    await this.render();
    // Between polls (up to 5 s apart) the times shown still move, once a second.
    this.ticker ??= setInterval(() => void this.render(), 1000).unref();
  }

  private async render(): Promise<void> {
    await this.spinner?.update(this.statusText('waiting for', monotonicNow()));
  }

  /** "waiting for k (2nd in line; turn in about 40s; held by …; waited 1m of 10m)". */
  private statusText(what: string, now: number): string {
    // In line, our place says more than how many wait (ourselves included).
    const holder = this.snapshot
      ? describeSnapshot(this.place ? { ...this.snapshot, waiting: undefined } : this.snapshot, now)
      : 'held';
    const limit = this.config.waitMs === undefined ? '' : ` of ${formatDuration(this.config.waitMs)}`;
    const inLine = this.place ? `${this.inLine(this.place)}; ` : '';
    const turnMs = this.turnMs(now);
    const turn =
      turnMs === undefined
        ? ''
        : turnMs === 'unknown'
          ? 'turn time unknown; '
          : `turn in about ${formatDuration(turnMs)}; `;
    const waited = formatDuration(now - (this.waitStartedAt ?? now));
    return `${what} ${this.config.key} (${inLine}${turn}${holder}; waited ${waited}${limit})`;
  }

  /**
   * About how long until our turn, in whole seconds, from the recent hold times and the holder in
   * front (turn-estimate.ts); 'unknown' when no honest number can be given, undefined without data.
   */
  private turnMs(now: number): TurnEstimate {
    const holder = this.snapshot?.holder;
    const since = holder?.sinceMs;
    // No holder seen (it left as we looked): the next hold is a whole one.
    const heldMs = !holder
      ? 0
      : since === undefined
        ? undefined
        : Math.max(0, storeNow(this.snapshot!.clock, now) - since);
    const ends = !holder
      ? 'command'
      : // A `dlock hold` (a freeze) is no job of the usual length: its end, or an unhold no one can foresee.
        isClosed(holder) || pidAlive(holder) === false || holder.hold === true
        ? 'lease'
        : hasNoProcess(holder)
          ? 'release-or-lease'
          : 'command';
    const current = { ends, heldMs, leaseLeftMs: this.agedPttl(now) } as const;
    const ms = turnEstimateMs(this.holdTimes ?? [], this.place, slotsOf(this.lock.mode), current);
    return typeof ms === 'number' ? Math.max(1000, Math.round(ms / 1000) * 1000) : ms;
  }

  /**
   * One "wait-status" line or event: who holds the lock, our place, the estimate. Shown like a
   * warning (without --verbose; --quiet hides it). A holder that cannot be read is "held".
   */
  private async statusLine(what: string, reread = true): Promise<void> {
    this.holdTimes ??= await recentHoldTimes(this.lock);
    // The first line shows the holder waiting() has just read; a later one reads it again.
    if (reread) this.snapshot = (await this.lock.read().then(snapshotOf, () => undefined)) ?? this.snapshot;
    if (this.stopped) return;
    const now = monotonicNow();
    const waitedMs = now - (this.waitStartedAt ?? now);
    const turnMs = this.turnMs(now);
    const holder = this.snapshot ? publicHolder(this.snapshot.holder, this.agedPttl(now)) : null;
    const fields = {
      key: this.config.key,
      waited_ms: waitedMs,
      ...(this.place ? { place: this.place } : {}),
      ...this.priorityField(),
      ...(typeof turnMs === 'number' ? { turn_ms: turnMs } : {}),
      holder,
    };
    this.log.event('wait-status', fields, this.statusText(what, now), 'warn');
  }

  /** "2nd in line", and the --priority it waits with when one was given: "2nd in line, priority 5". */
  private inLine(place: number): string {
    const { priority } = this.config.keyOptions;
    return `${ordinal(place)} in line${priority === undefined ? '' : `, priority ${priority}`}`;
  }

  private priorityField(): { priority?: number } {
    const { priority } = this.config.keyOptions;
    return priority === undefined ? {} : { priority };
  }

  /** The holder's TTL left now, from the snapshot's reading. */
  private agedPttl(now: number): number | undefined {
    const pttl = this.snapshot?.ttlLeftMs;
    return pttl === undefined || pttl < 0 ? pttl : Math.max(0, pttl - (now - this.snapshot!.clock.readAt));
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.ticker);
    this.spinner?.stop();
  }

  /**
   * The busy error, saying who holds the lock (also with --quiet: it is the error's point);
   * -E 0 means "skip quietly", so it then prints nothing unless --verbose, but its event (JSON,
   * --on-event, history) names the holder as with any -E, and a holder that cannot be read is 69.
   */
  async notObtained(waitedMs: number): Promise<NotObtainedError | UnavailableError> {
    const read = await this.lock.read();
    const refused = refusedOf(read);
    if (refused.length > 0) return unreadable(this.config.key, refused);
    const snapshot = snapshotOf(read);
    const when = this.config.waitMs ? ` within ${formatDuration(this.config.waitMs)}` : '';
    const holder = snapshot ? describeSnapshot(snapshot) : 'held by another owner';
    return notObtained(
      this.config,
      { event: 'busy', message: `${this.config.key} is busy (${holder}); not acquired${when}` },
      {
        key: this.config.key,
        waited_ms: waitedMs,
        holder: snapshot ? publicHolder(snapshot.holder, snapshot.ttlLeftMs) : null,
      },
    );
  }
}

/** 1st, 2nd, 3rd, 4th … 11th, 12th, 13th, 21st. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
