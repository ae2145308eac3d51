// --on-event: one /bin/sh -c <command> per lock event, beside the lock. The event reaches the hook
// only through its environment (DLOCK_EVENT, DLOCK_EVENT_<FIELD>) and its stdin (the JSON line):
// nothing of it is ever put in the command text, so no value is read by a shell.

import { spawn, type ChildProcess } from 'node:child_process';
import type { Fields, Logger } from '../log.js';
import { maskSecrets } from '../secrets.js';
import { toJson } from '../untrusted.js';

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

/** The hooks of one dlock process: started per event, never waited for until exit. */
export class Hooks {
  private readonly running = new Set<ChildProcess>();

  constructor(
    private readonly command: string,
    private readonly log: Logger,
    /** Their output: dlock's stderr in text mode; nowhere in json mode (stderr is JSON lines only). */
    private readonly output: 'inherit' | 'ignore',
  ) {}

  /** Start the hook for `record`; its failure is one warning, and it never holds anything up. */
  run(record: Fields): void {
    let hook: ChildProcess;
    try {
      hook = spawn('/bin/sh', ['-c', this.command], {
        env: { ...process.env, ...eventVariables(record) },
        stdio: ['pipe', this.output === 'inherit' ? 2 : 'ignore', this.output === 'inherit' ? 2 : 'ignore'],
      });
    } catch (error) {
      return this.warn(record, error instanceof Error ? error.message : String(error));
    }
    this.running.add(hook);
    hook.stdin!.on('error', () => {}); // a hook that does not read its stdin
    hook.stdin!.end(`${toJson(record)}\n`);
    hook.once('error', (error) => {
      this.running.delete(hook);
      this.warn(record, error.message);
    });
    hook.once('exit', (code, signal) => {
      this.running.delete(hook);
      if (code !== 0) this.warn(record, signal ? `killed by ${signal}` : `exit ${code}`);
    });
  }

  /** Wait for the hooks still running until `deadline` (a promise); then leave them running, and say so. */
  async settle(deadline: Promise<void>): Promise<void> {
    const all = [...this.running].map((hook) => new Promise((resolve) => hook.once('exit', resolve)));
    if (all.length === 0) return;
    await Promise.race([Promise.all(all), deadline]);
    for (const hook of this.running) {
      hook.removeAllListeners('exit');
      hook.unref();
      this.log.warn(`--on-event hook (pid ${hook.pid}) still running at exit; left running`, {
        event: 'hook-failed',
        pid: hook.pid,
      });
    }
  }

  private warn(record: Fields, why: string): void {
    this.log.warn(maskSecrets(`--on-event hook for ${text(record.event)} failed: ${why}`), {
      event: 'hook-failed',
      lock_event: record.event,
    });
  }
}
