// One instance's failure as data: which instance, why (in dlock's words, no password), whether a
// retry can cure it and whether the server replied. Messages are made from it; nothing reads a
// message back.

import { UnavailableError } from '../../../errors.js';
import { describeFailure, isErrorReply } from './describe.js';

export interface InstanceFailure {
  /** The instance's URL without its password. */
  label: string;
  reason: string;
  /**
   * No retry can change it (a permission, credentials, the wrong kind of server, a lying reply): a wait gives up at
   * once.
   */
  permanent: boolean;
  /** The reason is what a server that was reached answered or is: the error line leaves out "cannot reach". */
  reached: boolean;
  /** The server replied with an error, so the command did nothing; otherwise its reply may be lost and hide a write. */
  errorReply: boolean;
}

/** The failure of a command or connection to `label`. */
export function instanceFailure(label: string, error: unknown): InstanceFailure {
  return { label, ...describeFailure(error), errorReply: isErrorReply(error) };
}

/**
 * A failure dlock found, not an error the server sent (no answer in time, a host that did not resolve): a retry may
 * cure it.
 */
export function retryableFailure(label: string, reason: string): InstanceFailure {
  return { label, reason, permanent: false, reached: false, errorReply: false };
}

/** "label: reason", as messages show a failure. */
export function failureText({ label, reason }: Pick<InstanceFailure, 'label' | 'reason'>): string {
  return `${label}: ${reason}`;
}

/** One instance's failure as the whole error line: "cannot reach <url>: why" only when it may not have answered. */
export function failureLine(failure: InstanceFailure): string {
  return failure.reached ? failureText(failure) : `cannot reach ${failureText(failure)}`;
}

/** 69 for one instance that could not be connected to; the failure stays data for the lock set. */
export class InstanceUnavailableError extends UnavailableError {
  constructor(readonly failure: InstanceFailure) {
    super(failureLine(failure));
  }
}
