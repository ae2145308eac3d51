// Every signal dlock sends to the child (or to the process a keeper watches), logged with why:
// the lock was lost, dlock itself was signalled (forwarded), or the process outlived its grace
// after SIGTERM (kill-after). A signal that stops it reaches the whole command (./tree.ts): what
// it started, and the process groups it made. A forwarded SIGINT or SIGQUIT (and USR1/USR2) goes
// to the first process alone: a terminal's Ctrl-C already reached its whole foreground group, and
// a shell handles an interrupt itself (it waits for its foreground step and then decides), so a
// second copy to every process would be a second interrupt; the SIGKILL that follows it after
// --kill-after reaches them all. For `dlock run` (a mark) the command is over only once its last
// process is gone: background children keep the lock held, and are stopped as the command is.

import type { Logger } from '../log.js';
import { longTimeout, now, sleep, type LongTimer } from '../clock.js';
import { isRunning } from '../pid.js';
import { CommandTree, kill, type SectionScope } from './tree.js';

export type SignalReason = 'lost' | 'forwarded' | 'kill-after' | 'left-behind' | 'max-hold' | 'heartbeat-missed';

const WHY: Record<SignalReason, string> = {
  lost: 'the lock was lost',
  forwarded: 'dlock received it',
  'kill-after': 'it was still running after its grace',
  'left-behind': 'it was still running after its grace',
  'max-hold': 'the lock was held for its --max-hold',
  'heartbeat-missed': 'no heartbeat came within --heartbeat',
};

/** What is signalled: the child (./spawn.ts ChildHandle), or a process known by its pid alone. */
export interface SignalTarget {
  pid: number | undefined;
  kill(signal: NodeJS.Signals): void;
}

/** A process that is not our child, by pid: signalled while it runs, never once it is gone. */
export function processTarget(pid: number): SignalTarget {
  return {
    pid,
    kill(signal) {
      if (isRunning(pid)) kill(pid, signal);
    },
  };
}

/** Signals that stop the command, sent to all of it; the others go to its first process alone. */
const STOPPING: ReadonlySet<NodeJS.Signals> = new Set(['SIGTERM', 'SIGHUP', 'SIGKILL']);
/** Signals forwarded to the first process alone that may end it, and a SIGKILL then follow. */
const INTERRUPTS: ReadonlySet<NodeJS.Signals> = new Set(['SIGINT', 'SIGQUIT']);
/** How often, once the first process has exited, dlock looks whether what it started and stopped is gone too. */
const SURVIVOR_POLL_MS = 20;
/** How often it looks whether the background processes it waits for (nothing stopping them) are gone. */
const BACKGROUND_POLL_MS = 100;

export class ChildSignals {
  private readonly tree: CommandTree | undefined;
  /** A signal that stops the command was sent to all of it. */
  private stoppedAll = false;
  /** A SIGKILL was sent to all of it. */
  private killedAll = false;
  private timer: LongTimer | undefined;
  private due = Infinity;
  /** Resolves the promise `settled()` returns, while a SIGKILL is due. */
  private settle: (() => void) | undefined;
  private settling: Promise<void> = Promise.resolve();

  constructor(
    private readonly child: SignalTarget,
    private readonly log: Logger,
    private readonly lock: { key: string; fence?: string },
    /** The longest grace before SIGKILL (--kill-after, capped at ttl/3). */
    private readonly maxGraceMs: number,
    /** How the log lines name the process. */
    private readonly name = 'the command',
    /**
     * `dlock run`'s lock, as its command's environment has it (`DLOCK_TOKEN=<token>`): the command
     * is over once every process of it is gone (finish()), found by this mark too (./tree.ts).
     * A keeper's: the section's lock, and where its processes are found (`section`).
     */
    private readonly mark?: string,
    section?: SectionScope,
  ) {
    this.tree = child.pid === undefined ? undefined : new CommandTree(child.pid, mark, section);
  }

  /** Signal the child (all of it, for a stop: see above) first, then log it: a slow stderr never delays a kill. */
  send(signal: NodeJS.Signals, reason: SignalReason): void {
    const whole = reason !== 'forwarded' || STOPPING.has(signal);
    // An interrupt may end the first process at once: what it started is found before it is reparented.
    if (!whole && INTERRUPTS.has(signal)) this.tree?.remember();
    const others = whole && this.tree ? this.tree.signal(signal, () => this.child.kill(signal)) : [];
    if (!whole || !this.tree) this.child.kill(signal);
    this.stoppedAll ||= whole;
    this.killedAll ||= whole && signal === 'SIGKILL';
    const why = WHY[reason];
    this.log.event(
      'signal',
      { ...this.lock, signal, reason, pid: this.child.pid, ...(others.length > 0 ? { other_pids: others } : {}) },
      `sent ${signal} to ${this.name} (pid ${this.child.pid}): ${why}`,
      reason === 'kill-after' ? 'warn' : 'info',
    );
  }

  /**
   * SIGKILL the child after a delay (the earliest one asked for wins). `stallNoticeMs`: when the
   * timer fires later than that after it was due (dlock itself stalled), say so.
   */
  killLater(delayMs: number, stallNoticeMs = Infinity): void {
    const at = now() + Math.max(0, Math.min(delayMs, this.maxGraceMs));
    if (at >= this.due) return;
    this.due = at;
    // What the command started now, to find it when the SIGKILL is due even if it was reparented.
    this.tree?.remember();
    this.timer?.clear();
    if (!this.settle) this.settling = new Promise((resolve) => (this.settle = resolve));
    this.timer = longTimeout(() => {
      this.send('SIGKILL', 'kill-after');
      this.markSettled();
      const lateMs = Math.round(now() - at);
      if (lateMs > stallNoticeMs) {
        this.log.event(
          'stalled',
          { ...this.lock, late_ms: lateMs },
          `dlock itself was stalled: its SIGKILL timer fired ${lateMs}ms late, past the moment ${this.name} had to ` +
            'be gone; it may have run past the lease',
        );
      }
    }, at - now());
  }

  /**
   * SIGKILL at once, the lock's kill deadline having passed while dlock itself was stalled (its
   * deadline timer fired `lateMs` late): no time is left for a grace. Says so.
   */
  killStalled(lateMs: number | undefined): void {
    this.send('SIGKILL', 'lost');
    const late = lateMs === undefined ? {} : { late_ms: Math.round(lateMs) };
    this.log.event(
      'stalled',
      { ...this.lock, ...late },
      `dlock itself was stalled: its deadline timer fired ${Math.round(lateMs ?? 0)}ms late, past the ` +
        `moment ${this.name} had to be gone; killed it at once (SIGKILL), but it may have run past the lease`,
    );
  }

  /** Resolves once no SIGKILL is due: sent, cancelled, or never asked for. */
  settled(): Promise<void> {
    return this.settling;
  }

  cancel(): void {
    this.timer?.clear();
    this.markSettled();
  }

  /**
   * The first process has exited (with `status`): while a SIGKILL is due, wait for what it started
   * (and was stopped with it) to be gone too, or SIGKILL it when its grace ends; then no SIGKILL is
   * due. With a mark, wait for every process of the command to be gone, whatever stops them, or
   * until `abandon` aborts (a section released by its owner: they run on, no longer waited for).
   */
  async finish(status?: number, abandon?: AbortSignal): Promise<void> {
    if (this.mark !== undefined && this.tree) await this.outlive(this.tree, status, abandon);
    if (abandon?.aborted) {
      this.cancel();
      return;
    }
    const survivors = this.settle ? (this.tree?.survivors() ?? []) : [];
    // Interrupted (SIGINT, SIGQUIT: to the first process alone), it exited and left them running.
    if (survivors.length > 0 && !this.stoppedAll) this.sendLeftBehind(survivors);
    while (this.settle && this.tree && this.tree.survivors().length > 0) {
      await Promise.race([this.settling, sleep(SURVIVOR_POLL_MS)]);
    }
    this.cancel();
  }

  /**
   * Hold on until the last process of the command is gone (flock's lock lasts as long as its
   * descriptor): one walk of /proc when none is left, a walk every BACKGROUND_POLL_MS while some
   * are. Meanwhile a lost lock, a bound or a signal stops them as it stops the command.
   */
  private async outlive(tree: CommandTree, status: number | undefined, abandon?: AbortSignal): Promise<void> {
    const abandoned = new Promise<void>((resolve) =>
      abandon?.addEventListener('abort', () => resolve(), { once: true }),
    );
    let left = tree.remaining();
    // A process whose environment could not be read is looked at once more before the release.
    if (left.length === 0 && tree.unread) {
      await sleep(SURVIVOR_POLL_MS);
      left = tree.remaining();
    }
    if (left.length > 0 && !this.settle) {
      // One more look first: a process on its way out (exiting, or `setsid -f`'s child before it
      // leaves the session) is not reported as one the lock is held for.
      await sleep(SURVIVOR_POLL_MS);
      left = tree.remaining();
      // Not once they were all stopped (a SIGKILL: nothing is due after it): they are on their way out.
      if (left.length > 0 && !this.settle && !this.stoppedAll) this.logBackground(left, status);
    }
    while (left.length > 0 && !abandon?.aborted) {
      // An interrupt (to the first process alone) came while they ran: they are stopped as left behind.
      if (this.settle && !this.stoppedAll) this.sendLeftBehind(left);
      // Forked after the SIGKILL's walk: killed too.
      if (this.killedAll) tree.signal('SIGKILL', () => {});
      // A stop that comes meanwhile signals them at once (its listener): the next look is at most this late.
      await Promise.race([
        sleep(this.settle !== undefined || this.killedAll ? SURVIVOR_POLL_MS : BACKGROUND_POLL_MS),
        abandoned,
      ]);
      if (!abandon?.aborted) left = tree.remaining();
    }
  }

  /** The first process exited, and left processes running: the lock is held for them. */
  private logBackground(pids: number[], status: number | undefined): void {
    const count = pids.length === 1 ? '1 background process is' : `${pids.length} background processes are`;
    this.log.event(
      'background',
      { ...this.lock, pid: this.child.pid, ...(status === undefined ? {} : { exit: status }), other_pids: pids },
      `${this.name} (pid ${this.child.pid}) exited${status === undefined ? '' : ` ${status}`}; holding ` +
        `${this.lock.key} until its ${count} gone (pid${pids.length === 1 ? '' : 's'} ${pids.join(', ')})`,
    );
  }

  /** SIGTERM to what the command started, its first process having exited: their grace runs to the due SIGKILL. */
  private sendLeftBehind(survivors: number[]): void {
    this.stoppedAll = true;
    const signalled = this.tree?.signal('SIGTERM', () => {}) ?? survivors;
    this.log.event(
      'signal',
      { ...this.lock, signal: 'SIGTERM', reason: 'left-behind', pid: this.child.pid, other_pids: signalled },
      `sent SIGTERM to what ${this.name} (pid ${this.child.pid}) left running: pids ${signalled.join(', ')}`,
    );
  }

  private markSettled(): void {
    this.settle?.();
    this.settle = undefined;
  }
}
