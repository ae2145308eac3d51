// The monitor of one dlock process (--ping, --on-event): an event sink (../log.ts) that pings
// <url>/start when the lock is held and runs a hook per lock event, all beside the lock; at exit
// it sends the final ping and waits for it, and for the hooks still running, at most the bound.

import { hostname } from 'node:os';
import { EXIT } from '../errors.js';
import type { MonitorConfig } from '../config/index.js';
import { now, sleep } from '../clock.js';
import { addEventSink, type EventSink, type Fields, type Logger } from '../log.js';
import { Hooks } from './hooks.js';
import { ping, pingUrl, runId } from './ping.js';
import { newOwnerToken } from '../backend/index.js';
import { maskSecrets, redactUrl } from '../secrets.js';
import type { OutputTail } from './output-tail.js';

/**
 * Which pings this process sends. run: all. The keeper of `dlock acquire`: /start and the end of
 * the section it holds, with the status its `released` event carries (`dlock release
 * --exit-status`, 124 for --max-hold or --heartbeat); a status it cannot know is sent to <url>/log,
 * never as a success. acquire's foreground: only a run that did not get the lock (the keeper
 * pings the rest, and the busy error is reported by the foreground).
 */
export type MonitorRole = 'run' | 'keeper' | 'foreground';

/** Start telling `config`'s monitors about every lock event of this process, for `key`. */
export function startMonitor(
  config: MonitorConfig,
  key: string,
  log: Logger,
  role: MonitorRole,
  tail?: OutputTail,
): void {
  addEventSink(new Monitor(config, key, log, role, tail));
}

class Monitor implements EventSink {
  private readonly hooks: Hooks | undefined;
  private acquired: Fields | undefined;
  private turnedAway: Fields | undefined;
  private lost = false;
  /** The `exit` of the last `released` event: how a keeper's section ended (null when it cannot tell). */
  private releasedExit: unknown;
  private started: Promise<void> = Promise.resolve();
  /** Pings sent or waiting to be sent, not yet answered or failed: reported as timed out at the bound. */
  private readonly pending = new Set<{ url: string; reported: boolean }>();
  /** The run id of every ping of this process (`?rid=`): healthchecks pairs /start with the end by it. */
  private readonly rid = runId(newOwnerToken());

  constructor(
    private readonly config: MonitorConfig,
    private readonly key: string,
    private readonly log: Logger,
    private readonly role: MonitorRole,
    /** --ping-output: the tail of the command's output, the final ping's body. */
    private readonly tail?: OutputTail,
  ) {
    if (config.onEvent !== undefined)
      this.hooks = new Hooks(config.onEvent, log, log.format === 'json' ? 'ignore' : 'inherit', config.timeoutMs);
  }

  seen(record: Fields): void {
    // Beside the lock: the command is started before a hook or a ping is.
    if (this.hooks) setImmediate(() => this.hooks!.run(record));
    if (record.event === 'lost') this.lost = true;
    if (record.event === 'released') this.releasedExit = record.exit;
    if (record.event === 'busy' || record.event === 'done' || record.event === 'superseded') this.turnedAway = record;
    if (record.event === 'acquired' && this.acquired === undefined && this.role !== 'foreground') {
      this.acquired = record;
      if (this.config.pingUrl !== undefined)
        this.started = new Promise((resolve) => setImmediate(resolve)).then(() => this.send('start', {}));
    }
  }

  async finish(exitCode: number): Promise<void> {
    const deadline = now() + this.config.timeoutMs;
    const bound = sleep(this.config.timeoutMs);
    // Hooks queued by the last events (setImmediate) are queued before they are waited for.
    await new Promise((resolve) => setImmediate(resolve));
    const final = this.finalPing(exitCode, deadline, bound);
    await Promise.all([Promise.race([final, bound]), this.hooks?.settle(bound)]);
    // The bound ran out first: say so for each ping still out (its own timeout may fire a little
    // later than the bound, and dlock exits now).
    for (const entry of this.pending) this.failed(entry, 'timed out');
  }

  /** <url>, <url>/<status> or <url>/log (or nothing) for how this process ends; after /start has answered. */
  private async finalPing(exitCode: number, deadline: number, bound: Promise<void>): Promise<void> {
    if (this.config.pingUrl === undefined) return;
    if (this.acquired !== undefined) {
      const heldMs = Math.round(Date.now() - Number(this.acquired.ts_ms));
      const section = this.role === 'keeper' && exitCode === 0 && !this.lost ? this.sectionStatus() : 0;
      if (section === undefined) {
        const message = "the section's exit status is unknown: it ended without dlock release --exit-status";
        return this.send('log', { exit_status: 'unknown', held_ms: heldMs, message }, deadline, this.started);
      }
      const status = exitCode !== 0 ? exitCode : this.lost ? EXIT.lost : section;
      const fields = { exit_status: status, held_ms: heldMs };
      // --ping-output: what the command wrote, once it (and what it left running) closed its output.
      await this.tail?.ended(bound);
      return this.send(status === 0 ? '' : String(status), fields, deadline, this.started, this.tail?.bytes());
    }
    if (this.role === 'keeper' || (this.role === 'foreground' && exitCode === 0)) return;
    if (this.turnedAway !== undefined) {
      const { event, waited_ms } = this.turnedAway;
      if (this.config.pingBusy) await this.send('log', { event, exit_status: exitCode, waited_ms }, deadline);
      return;
    }
    // Not held for another reason (Redis unreachable, interrupted while waiting): the job did not run.
    if (exitCode !== 0) await this.send(String(exitCode), { exit_status: exitCode }, deadline);
  }

  /** A keeper's section's exit status, from its `released` event; undefined when unknown. */
  private sectionStatus(): number | undefined {
    const exit = this.releasedExit;
    return typeof exit === 'number' && Number.isInteger(exit) && exit >= 0 && exit <= 255 ? exit : undefined;
  }

  /** Ping <url>/<suffix> once `after` has settled (the final ping waits for /start's answer). */
  private async send(
    suffix: string,
    fields: Fields,
    deadline = now() + this.config.timeoutMs,
    after: Promise<void> = Promise.resolve(),
    /** Sent instead of the JSON summary (--ping-output). */
    text?: Buffer,
  ): Promise<void> {
    const held = this.acquired;
    const body = {
      key: this.key,
      ...(held ? { fence: held.fence, waited_ms: held.waited_ms } : {}),
      host: hostname(),
      ...fields,
    };
    // Named without its run id in a warning: the check's URL, as given.
    const entry = { url: pingUrl(this.config.pingUrl!, suffix), reported: false };
    this.pending.add(entry);
    await after;
    const failure = await ping(pingUrl(this.config.pingUrl!, suffix, this.rid), text ?? body, deadline);
    this.pending.delete(entry);
    if (failure !== undefined) this.failed(entry, failure);
  }

  /** One warning line per ping that failed, credentials masked. */
  private failed(entry: { url: string; reported: boolean }, why: string): void {
    if (entry.reported) return;
    entry.reported = true;
    this.pending.delete(entry);
    // The URL through the URL masker (a password with a blank, a malformed one), the rest as any text.
    const url = redactUrl(entry.url);
    this.log.warn(`ping ${url} failed: ${maskSecrets(why)}`, { event: 'ping-failed', url });
  }
}
