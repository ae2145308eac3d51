// What a waiting dlock shows: a spinner on a terminal, a verbose/json "waiting"
// event otherwise, and the one-line message when the lock was not obtained.

import { spinnerWanted, Spinner } from '../spinner.js';
import type { RunConfig } from '../config.js';
import { formatDuration } from '../duration.js';
import { NotObtainedError } from '../errors.js';
import type { Logger } from '../log.js';
import type { LockSet } from '../lockset/lockset.js';
import { describeSnapshot, holderSnapshot, type HolderSnapshot } from '../views/holder-text.js';
import { publicHolder } from '../views/instance-views.js';

type DisplayConfig = Pick<RunConfig, 'key' | 'waitMs' | 'conflictExitCode' | 'verbosity' | 'logFormat'>;

export class WaitDisplay {
  private readonly spinner: Spinner | undefined;
  private announced = false;
  private snapshot: HolderSnapshot | undefined;
  private waitStartedAt: number | undefined;
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: DisplayConfig,
    private readonly set: LockSet,
    private readonly log: Logger,
  ) {
    const quiet = config.verbosity === 'quiet' || config.logFormat === 'json';
    this.spinner = spinnerWanted(process.env, quiet) ? new Spinner(process.env) : undefined;
  }

  async waiting(waitedMs: number): Promise<void> {
    if (!this.announced) {
      this.announced = true;
      this.log.event('waiting', { key: this.config.key, waited_ms: waitedMs }, `waiting for ${this.config.key}`);
    }
    if (!this.spinner) return;
    this.waitStartedAt ??= Date.now() - waitedMs;
    this.snapshot = await holderSnapshot(this.set);
    await this.render();
    // Between polls (up to 5 s apart) the times shown still move, once a second.
    this.ticker ??= setInterval(() => void this.render(), 1000).unref();
  }

  private async render(): Promise<void> {
    const now = Date.now();
    const holder = this.snapshot ? describeSnapshot(this.snapshot, now) : 'held';
    const limit = this.config.waitMs === undefined ? '' : ` of ${formatDuration(this.config.waitMs)}`;
    await this.spinner?.update(`waiting for ${this.config.key} (${holder}; waited ${formatDuration(now - (this.waitStartedAt ?? now))}${limit})`);
  }

  stop(): void {
    clearInterval(this.ticker);
    this.spinner?.stop();
  }

  /**
   * The busy error, saying who holds the lock (also with --quiet: it is the error's point);
   * -E 0 means "skip quietly", so it then prints nothing unless --verbose.
   */
  async notObtained(waitedMs: number): Promise<NotObtainedError> {
    const silent = this.config.conflictExitCode === 0 && this.config.verbosity !== 'verbose';
    const snapshot = silent ? undefined : await holderSnapshot(this.set);
    const when = this.config.waitMs ? ` within ${formatDuration(this.config.waitMs)}` : '';
    const holder = snapshot ? describeSnapshot(snapshot) : 'held by another owner';
    const error = new NotObtainedError(`${this.config.key} is busy (${holder}); not acquired${when}`, this.config.conflictExitCode);
    error.silent = silent;
    error.event = 'busy';
    error.fields = { key: this.config.key, waited_ms: waitedMs, holder: snapshot ? publicHolder(snapshot.holder, snapshot.pttlMs) : null };
    return error;
  }
}
