// --on-event: one /bin/sh -c <command> per lock event, in the order of the events, beside the lock.
// The event reaches the hook only through its environment (DLOCK_EVENT, DLOCK_EVENT_<FIELD>) and its
// stdin (the JSON line): nothing of it is ever put in the command text, so no value is read by a shell.

import { spawn, type ChildProcess } from 'node:child_process';
import type { Fields, Logger } from '../log.js';
import { maskSecrets } from '../secrets.js';
import { toJson } from '../untrusted.js';
import { formatDuration } from '../duration.js';

/** The longest value a DLOCK_EVENT_<FIELD> variable holds; the JSON on stdin has the whole event. */
export const MAX_VARIABLE_LENGTH = 4096;

/** DLOCK_EVENT (the name) and a DLOCK_EVENT_<FIELD> per field: upper-cased, [A-Z0-9_] only, values as text. */
export function eventVariables(record: Fields): Record<string, string> {
  const variables: Record<string, string> = { DLOCK_EVENT: text(record.event) };
  for (const [field, value] of Object.entries(record)) {
    if (field === 'event' || value === undefined) continue;
    variables[`DLOCK_EVENT_${field.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`] = text(value);
  }
  // JSON's exit null is a word in the environment, as the history's text says it: lost or unknown.
  if (record.exit === null) variables.DLOCK_EVENT_EXIT = record.lost === true ? 'lost' : 'unknown';
  return variables;
}

/** A field's value as an environment variable holds it: text without NUL, cut to MAX_VARIABLE_LENGTH. */
function text(value: unknown): string {
  const whole = typeof value === 'string' ? value : value === null ? '' : (toJson(value) ?? String(value));
  return whole.replace(/\0/g, '').slice(0, MAX_VARIABLE_LENGTH);
}

/**
 * The hooks of one dlock process, run in the order of its events: one at a time, each bounded by
 * `boundMs` (--ping-timeout): a hook still running then is left running (one warning line) and
 * the next event's hook starts. They run beside the lock: nothing waits for them until exit.
 */
export class Hooks {
  private readonly queue: Fields[] = [];
  private current: { hook: ChildProcess; record: Fields; timer: NodeJS.Timeout } | undefined;
  /** Called each time the queue is empty and no hook runs. */
  private idle: (() => void)[] = [];
  /** At exit, past the bound: no hook starts any more. */
  private closed = false;

  constructor(
    private readonly command: string,
    private readonly log: Logger,
    /** Their output: dlock's stderr in text mode; nowhere in json mode (stderr is JSON lines only). */
    private readonly output: 'inherit' | 'ignore',
    private readonly boundMs: number,
  ) {}

  /** Queue the hook for `record`: it starts once the hooks of the events before it are done. */
  run(record: Fields): void {
    if (this.closed) return;
    this.queue.push(record);
    if (this.current === undefined) this.next();
  }

  /** Start the next event's hook; its failure is one warning, and it never holds anything up. */
  private next(): void {
    const record = this.queue.shift();
    if (record === undefined || this.closed) {
      for (const resolve of this.idle.splice(0)) resolve();
      return;
    }
    let hook: ChildProcess;
    try {
      hook = spawn('/bin/sh', ['-c', this.command], {
        env: { ...process.env, ...eventVariables(record) },
        stdio: ['pipe', this.output === 'inherit' ? 2 : 'ignore', this.output === 'inherit' ? 2 : 'ignore'],
      });
    } catch (error) {
      this.warn(record, error instanceof Error ? error.message : String(error));
      return this.next();
    }
    const done = () => {
      if (this.current?.hook !== hook) return;
      clearTimeout(this.current.timer);
      this.current = undefined;
      this.next();
    };
    const timer = setTimeout(() => {
      if (this.current?.hook !== hook) return;
      hook.unref();
      this.log.warn(
        maskSecrets(
          `--on-event hook for ${text(record.event)} (pid ${hook.pid}) still running after ` +
            `${formatDuration(this.boundMs)}; left running, the next event's hook starts`,
        ),
        { event: 'hook-failed', lock_event: record.event, pid: hook.pid },
      );
      done();
    }, this.boundMs);
    timer.unref();
    this.current = { hook, record, timer };
    hook.stdin!.on('error', () => {}); // a hook that does not read its stdin
    hook.stdin!.end(`${toJson(record)}\n`);
    hook.once('error', (error) => {
      this.warn(record, error.message);
      done();
    });
    hook.once('exit', (code, signal) => {
      if (code !== 0) this.warn(record, signal ? `killed by ${signal}` : `exit ${code}`);
      done();
    });
  }

  /**
   * Wait for the queued hooks until `deadline` (a promise); then leave the one running running,
   * start no other, and say so for each.
   */
  async settle(deadline: Promise<void>): Promise<void> {
    if (this.current === undefined && this.queue.length === 0) return;
    await Promise.race([new Promise<void>((resolve) => this.idle.push(resolve)), deadline]);
    this.closed = true;
    const current = this.current;
    if (current !== undefined) {
      clearTimeout(current.timer);
      current.hook.removeAllListeners('exit');
      current.hook.unref();
      const { record, hook } = current;
      this.log.warn(`--on-event hook for ${text(record.event)} (pid ${hook.pid}) still running at exit; left running`, {
        event: 'hook-failed',
        lock_event: current.record.event,
        pid: current.hook.pid,
      });
    }
    for (const record of this.queue.splice(0)) this.warn(record, 'not run: the bound (--ping-timeout) ran out at exit');
  }

  private warn(record: Fields, why: string): void {
    this.log.warn(maskSecrets(`--on-event hook for ${text(record.event)} failed: ${why}`), {
      event: 'hook-failed',
      lock_event: record.event,
    });
  }
}
