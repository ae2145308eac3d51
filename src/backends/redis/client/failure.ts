// A Redis instance's failure as data (../../../backend/failure.ts), classified from ioredis' errors.

import { UnavailableError } from '../../../errors.js';
import { failureLine, type MemberFailure } from '../../../backend/failure.js';
import { describeFailure, isErrorReply } from './describe.js';

/** The failure of a command or connection to `label`. */
export function instanceFailure(label: string, error: unknown): MemberFailure {
  return { label, ...describeFailure(error), errorReply: isErrorReply(error) };
}

/** 69 for one instance that could not be connected to; the failure stays data for the lock set. */
export class InstanceUnavailableError extends UnavailableError {
  constructor(readonly failure: MemberFailure) {
    super(failureLine(failure));
  }
}
