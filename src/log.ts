// stderr: one "dlock: " line per error; lock events as text (--verbose) or JSON objects.

import type { LogFormat, Verbosity } from './config.js';
import { epochMs } from './timeout.js';

export type LockEvent = 'waiting' | 'acquired' | 'renewed' | 'renew-failed' | 'lost' | 'released' | 'degraded' | 'outage' | 'restored';

export interface EventFields {
  key: string;
  fence?: string;
  waited_ms?: number;
  [field: string]: string | number | boolean | undefined;
}

/** Events a normal (not --verbose) text log still shows: something is wrong, or no longer is. */
const WARNINGS: ReadonlySet<LockEvent> = new Set(['renew-failed', 'lost', 'degraded', 'outage', 'restored']);

export class Logger {
  constructor(
    readonly verbosity: Verbosity,
    readonly format: LogFormat,
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  error(message: string): void {
    this.write(`dlock: ${oneLine(message)}\n`);
  }

  /** A warning that is not a lock event (still one line, hidden by --quiet). */
  warn(message: string): void {
    if (this.verbosity !== 'quiet') this.error(message);
  }

  event(event: LockEvent, fields: EventFields, text: string): void {
    if (this.verbosity === 'quiet') return;
    if (this.format === 'json') {
      const ts = epochMs();
      this.write(`${JSON.stringify({ ts: new Date(ts).toISOString(), ts_ms: Math.round(ts * 1000) / 1000, event, ...fields })}\n`);
    } else if (this.verbosity === 'verbose' || WARNINGS.has(event)) {
      this.write(`dlock: ${oneLine(text)}\n`);
    }
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
