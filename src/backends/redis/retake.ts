// Redlock: after a renewal a quorum won, put the lock back on the instances that had lost it.

import { retakeScript, type HeldLock } from './lock/retake.js';
import { now } from '../../clock.js';
import type { LockSet } from './lockset.js';
import { quorumSize, type Outcome } from './quorum.js';
import { validityMs } from '../../timing.js';

/**
 * Put the lock back where the extend found it gone (outcome "no"), while the quorum that just
 * renewed it proves nobody else can hold one during our validity. The script leaves a key of
 * another owner alone, and raises the fence counter to the held token. Best effort: an instance
 * that fails is tried again at the next renewal. Returns the labels of the re-taken instances.
 */
export async function retake(set: LockSet, outcomes: Outcome[], startedAt: number, held: HeldLock): Promise<string[]> {
  const targets = set.instances.filter((_, i) => outcomes[i] === 'no');
  // Never on a minority view: the instances that still have our owner must be a quorum.
  const confirmed = outcomes.filter((o) => o === 'yes').length;
  if (targets.length === 0 || confirmed < quorumSize(set.total)) return [];
  const leftMs = validityMs(set.ttlMs, startedAt, now());
  if (leftMs <= 0) return [];
  const input = { owner: set.owner, leftMs, ttlMs: set.ttlMs, held };
  const results = await Promise.allSettled(
    targets.map((i) => retakeScript.run(i.client, set.keys, input, set.timeoutMs)),
  );
  return targets.flatMap((instance, n) =>
    results[n].status === 'fulfilled' && results[n].value ? [instance.target.label] : [],
  );
}
