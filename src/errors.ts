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

/**
 * Base class: `message` is printed after "dlock: " as the one line on stderr. Messages quote
 * arguments (a mistyped URL, an option in the wrong place), so whatever may be a credential in
 * them is masked here, once for every error.
 */
export class DlockError extends Error {
  /** Exit with the code but print nothing (e.g. busy with -E 0: "skip quietly"). */
  silent = false;
  /** In --log-format json: the event's name ("error" unless set) and its fields besides the message. */
  event = 'error';
  fields: Record<string, unknown> = {};

  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(maskSecrets(message));
    this.name = new.target.name;
  }
}

/** Bad flag, duration, key, URL or combination of options (64). */
export class UsageError extends DlockError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** Redis unreachable, or too few Redlock instances answered for a quorum (69). */
export class UnavailableError extends DlockError {
  constructor(message: string) {
    super(message, EXIT.unavailable);
  }
}

/** The lock is held by someone else and was not acquired in time (75, or -E). */
export class NotObtainedError extends DlockError {
  constructor(message: string, exitCode: number = EXIT.busy) {
    super(message, exitCode);
  }
}

/** The lock was lost while the child ran (76). */
export class LockLostError extends DlockError {
  constructor(message: string) {
    super(message, EXIT.lost);
  }
}

/** The child could not be started: not found (127) or not executable (126). */
export class CommandError extends DlockError {}

/** Shorthand for the usage error that names an option and shows the bad value. */
export function badOption(option: string, value: unknown, why: string): UsageError {
  return new UsageError(`${option}: ${why} (got ${JSON.stringify(value)})`);
}
