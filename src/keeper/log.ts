// The keeper's log: the caller's stderr, in the caller's --log-format, while it is open. Once a
// write there fails (the terminal closed, the reader of the pipe exited), or when the keeper was
// given no stderr, its warnings and errors (a lost lock, failing renewals, a failed release)
// are appended as JSON lines to keeper.log in the runtime directory (./runtime.ts).

import { writeSync } from 'node:fs';
import type { LogFormat, Verbosity } from '../config/index.js';
import { eventLevel, Logger, type EventFields, type Fields, type Level, type LockEvent } from '../log.js';
import type { Output } from '../output.js';
import { appendKeeperLog } from './runtime.js';

class Stderr implements Output {
  constructor(public gone: boolean) {}

  write(text: string): void {
    if (this.gone) return;
    try {
      writeSync(2, text);
    } catch (error) {
      // A full pipe only loses this line.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') this.gone = true;
    }
  }
}

export class KeeperLogger extends Logger {
  private readonly file = new Logger('normal', 'json', { write: (line) => appendKeeperLog(line) }, false);

  constructor(
    verbosity: Verbosity,
    format: LogFormat,
    private readonly stderr: Stderr,
  ) {
    super(verbosity, format, stderr);
  }

  static create(verbosity: Verbosity, format: LogFormat, hasStderr: boolean): KeeperLogger {
    return new KeeperLogger(verbosity, format, new Stderr(!hasStderr));
  }

  override error(message: string, fields: Fields = {}): void {
    super.error(message, fields);
    if (this.stderr.gone) this.file.error(message, fields);
  }

  override warn(message: string, fields: Fields = {}): void {
    super.warn(message, fields);
    if (this.stderr.gone && this.verbosity !== 'quiet') this.file.warn(message, fields);
  }

  override event(event: LockEvent, fields: EventFields, text: string, level: Level = eventLevel(event)): void {
    super.event(event, fields, text, level);
    if (this.stderr.gone && level !== 'info' && this.verbosity !== 'quiet') this.file.event(event, fields, text, level);
  }
}
