// How the lock is taken, chosen once from what the backend can do (open.ts sets `caps` from the
// targets): on one Redis waiters queue in a FIFO line (ENTER/LEAVE, each waiter woken on its own
// channel; docs/reference/waiting-in-line.md); a Redlock quorum has no line: each attempt races
// the others (ACQUIRE, then RAISE_FENCE), a renewal re-takes where the lock was lost, and a
// release is announced on the lock's `:released` channel (docs/operations/deployments.md).

import type { LockState } from './lock/inspect.js';
import type { HeldLock } from './lock/retake.js';
import { tryAcquire, type Attempt } from './acquire.js';
import { leaveLine, tryEnter, type LeaveRecord } from './line.js';
import type { Asked } from './lock/line.js';
import type { MemberFailure, LockSet } from './lockset.js';
import type { Outcome } from './quorum.js';
import { retake } from './retake.js';
import { type HolderMeta } from '../../backend/holder.js';

/** What an attempt in line needs besides the set (Redlock needs none of it). */
export interface AttemptContext {
  /** Wait in line (false with --no-wait). */
  join: boolean;
  /** Set when a request may have landed without its reply: the caller releases if the wait ends without the lock. */
  replyLost: { value: boolean };
  /** What the attempt asks: how long it waited (for the history), the key's options (carried untouched). */
  recorded: () => Asked;
}

export interface Strategy {
  /** One attempt to take the lock. */
  tryOnce(set: LockSet, meta: HolderMeta, context: AttemptContext): Promise<Attempt>;
  /** Give up a place in line after a wait that did not get the lock (no line: undefined). */
  leave?: (set: LockSet, record: LeaveRecord, waitedMs: number) => Promise<MemberFailure | undefined>;
  /** The channel that wakes this waiter when the lock may be free. */
  wakeChannel(set: LockSet): string;
  /** After a renewal a quorum won: the labels of the instances where the lock was put back. */
  afterRenew(set: LockSet, outcomes: Outcome[], startedAt: number, held: HeldLock): Promise<string[]>;
  /** A majority of several instances decides: what each one says is worth showing, and one failing is not the end. */
  readonly quorum: boolean;
  /** Every holder, the mode and the line, from each instance's reading (only a lone instance's is the whole). */
  wholeState(states: (LockState | undefined)[]): LockState | undefined;
}

const LINE: Strategy = {
  tryOnce: (set, meta, { join, replyLost, recorded }) => tryEnter(set, meta, join, replyLost, recorded()),
  leave: leaveLine,
  // Each waiter has its own channel: a release wakes only who may enter.
  wakeChannel: (set) => `${set.keys.wakePrefix}${set.owner}`,
  afterRenew: () => Promise.resolve([]),
  quorum: false,
  wholeState: (states) => states[0],
};

const REDLOCK: Strategy = {
  tryOnce: (set, meta) => tryAcquire(set, meta),
  wakeChannel: (set) => set.keys.released,
  afterRenew: retake,
  quorum: true,
  wholeState: () => undefined,
};

/** The set's strategy: the line where the backend has one, else Redlock. */
export function strategyOf(set: Pick<LockSet, 'caps'>): Strategy {
  return set.caps.line ? LINE : REDLOCK;
}
