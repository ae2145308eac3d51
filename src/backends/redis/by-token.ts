// Renew and release by the owner token alone, across the lock set: the engine side of `dlock
// renew` and `dlock release` without --force (../hold/by-token.ts says what each answer means).
// A quorum decides: it released (or renewed); too few instances answered to tell; or the lock
// was no longer this token's.

import { inspectScript } from './lock/inspect.js';
import type { HoldMode } from '../../backend/mode.js';
import { instanceFailure } from './client/client.js';
import { now } from '../../clock.js';
import { extendAll } from './extend.js';
import type { LockSet } from './lockset.js';
import type { TokenRelease, TokenRenewal } from '../../backend/backend.js';
import { quorumSize } from './quorum.js';
import { releaseAll, releaseFailures } from './release.js';

/** Release the lock of the set's owner token on every instance; the history records `exitStatus` (the section's). */
export async function releaseByToken(set: LockSet, exitStatus: string): Promise<TokenRelease> {
  // One instance records the release in the key's history.
  const releases = await releaseAll(set, set.caps.history ? { record: { exitStatus, oncePerMs: 0 } } : {});
  const released = releases.filter(
    ({ outcome }) => outcome.kind === 'released' || outcome.kind === 'released-or-expired',
  ).length;
  const failures = [...releaseFailures(releases), ...set.unreachable];
  const quorum = quorumSize(set.total);
  const verdict = released >= quorum ? 'released' : released + failures.length >= quorum ? 'unavailable' : 'not-ours';
  return { verdict, releases, failures };
}

/** Extend the lease of `token` by the lock's own TTL (its `ttl_ms`); the renewal waits at most `boundMs`. */
export async function renewByToken(opened: LockSet, token: string, boundMs: number): Promise<TokenRenewal> {
  const own = await ownHold(opened, token);
  if (own.kind !== 'held') return own;
  const { ttlMs, mode } = own;
  const renewal = await extendAll({ ...opened, ttlMs, mode }, { givesUpAt: now() + boundMs });
  if (renewal.kind === 'refused') return { kind: 'not-ours' };
  if (renewal.kind === 'failed') return renewal;
  return { kind: 'renewed', ttlMs };
}

/**
 * The lease length the lock was taken with, from a quorum of instances where `token` holds it,
 * and how it holds (one holder of --slots/--shared renews its own lease).
 */
async function ownHold(
  set: LockSet,
  token: string,
): Promise<{ kind: 'held'; ttlMs: number; mode: HoldMode } | TokenRenewal> {
  const states = await Promise.allSettled(
    set.instances.map((instance) => inspectScript.run(instance.client, set.keys, undefined, set.timeoutMs)),
  );
  const ours = states.flatMap((s) => {
    const holder = s.status === 'fulfilled' ? s.value.holders.find((h) => h.owner === token) : undefined;
    return holder?.ttlMs && s.status === 'fulfilled' ? [{ ttlMs: holder.ttlMs, mode: s.value.mode }] : [];
  });
  const ttls = ours.map(({ ttlMs }) => ttlMs);
  const failures = [
    ...states.flatMap((s, i) =>
      s.status === 'rejected' ? [instanceFailure(set.instances[i].target.label, s.reason)] : [],
    ),
    ...set.unreachable,
  ];
  if (ttls.length >= quorumSize(set.total)) {
    const mode: HoldMode = ours[0].mode;
    return { kind: 'held', ttlMs: Math.max(...ttls), mode };
  }
  if (ttls.length + failures.length >= quorumSize(set.total)) return { kind: 'unavailable', failures };
  return { kind: 'not-ours' };
}
