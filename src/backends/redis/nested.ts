// A nested `dlock run` or `dlock acquire` on the key its parent holds runs under the parent's lock
// (no deadlock), but only when the parent's hold gives what it asks for: exclusive inside
// exclusive, shared inside shared or exclusive, the same --slots n inside --slots n. dlock never
// converts a hold (flock converts, symfony promotes by waiting): anything else is refused.

import { inspectScript, type LockState } from './lock/inspect.js';
import { MODES, nestedRefusal, slotsOf, type HoldMode } from '../../backend/mode.js';
import { UsageError } from '../../errors.js';
import { cut, toJson } from '../../untrusted.js';
import { instanceFailure } from './client/client.js';
import type { LockSet } from './lockset.js';
import type { Nested, ParentLease } from '../../backend/backend.js';
import { unavailable, unreadable } from '../../backend/failure.js';
import { tally, type Outcome } from './quorum.js';

/**
 * The parent's hold when a quorum of instances says `owner` (the parent's DLOCK_TOKEN) holds the
 * lock in a way that gives what `set.mode` asks; undefined when it does not hold it. The mode is
 * the one the server records for the parent's hold, not anything in the environment. Held in a
 * way that does not give it: a usage error saying why (the nested command would run beside the
 * other holders). With --slots, the inherited DLOCK_SLOT must be the slot the server records for
 * the parent.
 */
export async function isHeldBy(set: LockSet, owner: string, nested: Nested): Promise<ParentLease | undefined> {
  const { mine, outcomes, failures } = await readHolds(set, owner);
  const covered = (hold: ParentHold) => gives(hold, set.mode) && sameSlot(hold, nested.slot);
  if (tally(outcomes(covered), set.total) === 'won') {
    const holds = mine.filter((hold): hold is ParentHold => hold !== undefined && covered(hold));
    const ttls = holds.flatMap(({ ttlMs }) => (ttlMs ? [ttlMs] : []));
    return { mode: holds[0]!.mode, ttlMs: ttls.length > 0 ? Math.max(...ttls) : undefined, fence: holds[0]!.fence };
  }
  const listed = tally(outcomes(ANY), set.total);
  if (listed !== 'won') {
    // A quorum says it is not a holder. Else too few answered to tell (a grant missing, such as
    // +hgetall, or servers down): the nested run would wait for its own parent, or split the job: 69.
    if (listed === 'refused') return undefined;
    // One instance that answered but refused to be read (a grant missing): the words of run -n's error.
    if (set.total === 1 && failures.length > 0 && failures.every((f) => f.permanent && !f.reached))
      throw unreadable(nested.key, failures);
    throw unavailable(set.caps, failures);
  }
  const other = mine.find((hold) => hold && !gives(hold, set.mode));
  if (other) throw refusal(nested.key, other.mode, set.mode, nested.command);
  const held = mine.find((hold) => hold && !sameSlot(hold, nested.slot))!.slot;
  const inherited = nested.slot === undefined ? 'unset' : toJson(cut(nested.slot, 20));
  throw new UsageError(
    `${nested.key}: DLOCK_SLOT is ${inherited}, not the slot this process tree holds (${held ?? 'none'}): ` +
      `a nested ${nested.command} does not hand it on`,
  );
}

/**
 * Whether a quorum of instances lists `owner` among the key's holders, in any mode: what a nested
 * section's `dlock release` checks of the enclosing holder. Too few instances answer: 69.
 */
export async function isStillHeldBy(set: LockSet, owner: string): Promise<boolean> {
  const { outcomes, failures } = await readHolds(set, owner);
  const verdict = tally(outcomes(ANY), set.total);
  if (verdict === 'unavailable') throw unavailable(set.caps, failures);
  return verdict === 'won';
}

const ANY = (): boolean => true;

/**
 * `owner`'s hold on each instance as the server records it (undefined: not a holder there, or
 * unread), its per-instance outcomes for a test of that hold, and the instances that failed.
 */
async function readHolds(set: LockSet, owner: string) {
  const states = await Promise.allSettled(
    set.instances.map((one) => inspectScript.run(one.client, set.keys, undefined, set.timeoutMs)),
  );
  const mine = states.map((s) => (s.status === 'fulfilled' ? holding(s.value, owner) : undefined));
  const outcomes = (ok: (hold: ParentHold) => boolean): Outcome[] =>
    states.map((s, n) => (s.status === 'rejected' ? 'error' : mine[n] && ok(mine[n]) ? 'yes' : 'no'));
  const failures = states.flatMap((s, i) => {
    return s.status === 'rejected' ? [instanceFailure(set.instances[i]!.target.label, s.reason)] : [];
  });
  return { mine, outcomes, failures };
}

/** How the parent holds the key on one instance, as the server records it. */
interface ParentHold {
  mode: HoldMode;
  slot: number | undefined;
  ttlMs: number | undefined;
  fence: string;
}

/** The parent's hold among the holders an instance reports, if it is one of them. */
function holding(state: LockState, owner: string): ParentHold | undefined {
  const holder = state.holders.find((one) => one.owner === owner);
  return holder && { mode: state.mode, slot: holder.slot, ttlMs: holder.ttlMs, fence: holder.fence };
}

/** With --slots, the DLOCK_SLOT the nested call inherited is the parent's slot. */
function sameSlot(hold: ParentHold, inherited: string | undefined): boolean {
  return !MODES[hold.mode.kind].slotted || (hold.slot !== undefined && inherited === String(hold.slot));
}

/** Whether the parent's hold already gives a nested call what it asks for (the kinds table says). */
function gives(hold: ParentHold, asked: HoldMode): boolean {
  return nestedRefusal(hold.mode, asked) === undefined;
}

/** The one line a nested call that its parent's hold does not cover exits 64 with. */
function refusal(key: string, held: HoldMode, asked: HoldMode, command: Nested['command']): UsageError {
  const heldAs = MODES[held.kind].heldAs(slotsOf(held));
  const askedAs = MODES[asked.kind].askedAs(slotsOf(asked));
  const why = nestedRefusal(held, asked);
  return new UsageError(
    `${key} is held by this process tree ${heldAs}; ${askedAs} ${command} inside it ${why}: ` +
      'dlock does not convert a lock (flock converts, symfony promotes by waiting)',
  );
}
