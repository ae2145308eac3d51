// One member's failure as data (a Redis instance, a store endpoint): which one, why (in dlock's
// words, no password), whether a retry can cure it and whether the server replied. Messages are
// made from it; nothing reads a message back. The 69 errors say how many of the store's members
// failed, named as its capabilities name them.

import { UnavailableError } from '../errors.js';
import type { Capabilities } from './capabilities.js';

export interface MemberFailure {
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

/**
 * A failure dlock found, not an error the server sent (no answer in time, a host that did not resolve): a retry may
 * cure it.
 */
export function retryableFailure(label: string, reason: string): MemberFailure {
  return { label, reason, permanent: false, reached: false, errorReply: false };
}

/** "label: reason", as messages show a failure. */
export function failureText({ label, reason }: Pick<MemberFailure, 'label' | 'reason'>): string {
  return `${label}: ${reason}`;
}

/** One instance's failure as the whole error line: "cannot reach <url>: why" only when it may not have answered. */
export function failureLine(failure: MemberFailure): string {
  return failure.reached ? failureText(failure) : `cannot reach ${failureText(failure)}`;
}

/** 69: too few members answered; one member's failure is the whole line ("cannot reach <url>: why"). */
export function unavailable(caps: Capabilities, failures: MemberFailure[]): UnavailableError {
  if (caps.total === 1) {
    const lines = failures.map(failureLine).join('; ');
    return new UnavailableError(lines || `cannot reach ${caps.store.toLowerCase()}`);
  }
  return new UnavailableError(
    `no quorum: ${caps.quorum} of ${caps.total} ${caps.members.noun} needed, ${failures.length} failed ` +
      `(${failures.map(failureText).join('; ')})`,
  );
}

/**
 * 69: the lock is held, but who holds it may not be read (a grant is missing, a malformed reply):
 * the store answered, so never "cannot reach", and never "busy".
 */
export function unreadable(key: string, refused: MemberFailure[]): UnavailableError {
  return new UnavailableError(`cannot read who holds ${key}: ${refused.map(failureText).join('; ')}`);
}
