// The closed set of dlock's own failures, each with its exit code (docs/reference/exit-codes.md).
// A child's own status is not an error: it passes through untouched.

import { maskSecrets } from './secrets.js';

export const EXIT = {
  usage: 64,
  unavailable: 69,
  internal: 70,
  cantCreate: 73,
  busy: 75,
  lost: 76,
  notExecutable: 126,
  notFound: 127,
} as const;

/** How a DlockError is reported besides its message: its JSON event and fields, or nothing at all. */
export interface ErrorDetails {
  /** In --log-format json: the event's name ("error" unless set). */
  event?: string;
  /** In --log-format json: the event's fields besides the message. */
  fields?: Record<string, unknown>;
  /** Exit with the code but print nothing (e.g. busy with -E 0: "skip quietly"). */
  silent?: boolean;
}

/**
 * Base class: `message` is printed after "dlock: " as the one line on stderr. Messages quote
 * arguments (a mistyped URL, an option in the wrong place), so whatever may be a credential in
 * them is masked here, once for every error.
 */
export class DlockError extends Error {
  readonly silent: boolean;
  readonly event: string;
  readonly fields: Record<string, unknown>;

  constructor(
    message: string,
    readonly exitCode: number,
    { event = 'error', fields = {}, silent = false }: ErrorDetails = {},
  ) {
    super(maskSecrets(message));
    this.name = new.target.name;
    this.event = event;
    this.fields = fields;
    this.silent = silent;
  }
}

/** Bad flag, duration, key, URL or combination of options (64). */
export class UsageError extends DlockError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The store unreachable, or too few of its members answered for a quorum (69). */
export class UnavailableError extends DlockError {
  constructor(message: string) {
    super(message, EXIT.unavailable);
  }
}

/** The lock is held by someone else and was not acquired in time (75, or -E). */
export class NotObtainedError extends DlockError {
  constructor(message: string, exitCode: number = EXIT.busy, details: ErrorDetails = {}) {
    super(message, exitCode, details);
  }
}

/** What the conflict error needs from the options: -E, and whether --verbose asks to hear it anyway. */
export interface ConflictConfig {
  conflictExitCode: number;
  verbosity: string;
}

/** -E 0 means "skip quietly": the conflict error then prints nothing, unless --verbose. */
export function conflictIsSilent(config: ConflictConfig): boolean {
  return config.conflictExitCode === 0 && config.verbosity !== 'verbose';
}

/**
 * The conflict error (exit -E, default 75): the lock was not obtained, busy or done this window;
 * `why` names its JSON event and says it.
 */
export function notObtained(
  config: ConflictConfig,
  why: { event: 'busy' | 'done' | 'superseded'; message: string },
  fields: Record<string, unknown>,
): NotObtainedError {
  return new NotObtainedError(why.message, config.conflictExitCode, {
    event: why.event,
    fields,
    silent: conflictIsSilent(config),
  });
}

/** The lock was lost while the child ran (76). */
export class LockLostError extends DlockError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, EXIT.lost, details);
  }
}

/** The child could not be started: not found (127) or not executable (126). */
export class CommandError extends DlockError {}

/** Shorthand for the usage error that names an option and shows the bad value. */
export function badOption(option: string, value: unknown, why: string): UsageError {
  return new UsageError(`${option}: ${why} (got ${JSON.stringify(value)})`);
}
