// Every held lock under the prefix: SCAN (never KEYS) on each instance, then each lock read on every one.

import type { ListedLock, LockListing, MemberView, UnreadableLock } from '../../backend/backend.js';
import { formatDuration } from '../../duration.js';
import { UnavailableError } from '../../errors.js';
import { keyFromLockName, lockKeys, lockPattern } from './lock/keys.js';
import { parseScanReply } from './lock/replies.js';
import { AnsweredError, failureText, instanceFailure, type Instance } from './client/client.js';
import { masterNodes } from './client/nodes.js';
import { now, TimeoutError, withTimeout } from '../../clock.js';
import { readLock } from './inspect.js';
import type { LockSet } from './lockset.js';
import { quorumSize } from './quorum.js';
import type { RedisConnection } from './connection.js';

/**
 * Every lock under the prefix that a majority holds, found with SCAN on each instance (on a
 * Cluster, on each of its masters). A lock held by a majority is on at least one instance that
 * answered, unless a quorum of instances failed: then the list could miss one (69).
 */
export async function listLocks(set: LockSet, config: RedisConnection): Promise<LockListing> {
  const scans = await Promise.allSettled(set.instances.map((instance) => scanLocks(instance, config)));
  const failures = [
    ...scans.flatMap((s, i) =>
      s.status === 'rejected' ? [failureText(instanceFailure(set.instances[i].target.label, s.reason))] : [],
    ),
    ...set.unreachable.map(failureText),
  ];
  if (failures.length >= quorumSize(set.total)) {
    throw new UnavailableError(
      `cannot list locks: ${failures.length} of ${set.total} instances did not answer (${failures.join('; ')})`,
    );
  }
  const names = new Set(scans.flatMap((s) => (s.status === 'fulfilled' ? s.value : [])));
  const keys = [...names]
    .flatMap((name) => keyFromLockName(config.prefix, name) ?? [])
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const held: ListedLock[] = [];
  // A lock that could not be read is listed as such, never left out (exit 69 after the list).
  const unreadable: UnreadableLock[] = [];
  const reads = await inOrder(keys, READS_IN_FLIGHT, (key) => readLock(set, lockKeys(config.prefix, key)));
  for (const [i, key] of keys.entries()) {
    const { verdict, agreed, state, members } = reads[i];
    if (agreed)
      held.push({
        key,
        holder: agreed.holder!,
        ttlMs: agreed.ttlLeftMs ?? -1,
        clock: agreed.clock,
        ...(state ? { all: state.holders, waiting: state.lineLength } : {}),
      });
    else if (verdict === 'unknown') unreadable.push({ key, error: readErrors(set, members) });
  }
  return { keys, held, unreadable };
}

/**
 * Locks read at once: a round trip each, in flight together on each instance's one connection,
 * so a listing takes time linear in the number of locks, not in round trips. Each reply is at
 * most INSPECT_MAX_BYTES, so this also bounds what a forged listing can make dlock hold at once.
 */
const READS_IN_FLIGHT = 16;

/** `read` of every item, at most `limit` at a time, the results in the items' order. */
async function inOrder<T, R>(items: T[], limit: number, read: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await read(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Every lock hash name on one instance. The whole listing gets --connect-timeout: a server
 * whose cursor never comes back to 0 (or that answers garbage) fails the instance, never hangs.
 */
async function scanLocks(instance: Instance, config: RedisConnection): Promise<string[]> {
  const names: string[] = [];
  const deadline = now() + config.connectTimeoutMs;
  let pages = 0;
  const unfinished = () =>
    new AnsweredError(
      `SCAN did not finish within --connect-timeout (${formatDuration(config.connectTimeoutMs)}; a larger one ` +
        'lists more keys)',
    );
  for (const node of masterNodes(instance.client)) {
    let cursor = '0';
    do {
      const left = Math.floor(deadline - now());
      if (left <= 0) throw unfinished();
      const scan = node.scan(cursor, 'MATCH', lockPattern(config.prefix), 'COUNT', 500, 'TYPE', 'hash');
      // A first SCAN that hangs is a hung server ("timed out"); a later one, a listing too long.
      const reply = await withTimeout(scan, left).catch((error: unknown) => {
        throw error instanceof TimeoutError && pages > 0 ? unfinished() : error;
      });
      const page = parseScanReply(reply);
      pages++;
      cursor = page.cursor;
      names.push(...page.names);
    } while (cursor !== '0');
  }
  return names;
}

/** Why a lock could not be read: each failing instance's reason (named by its URL in a quorum). */
function readErrors(set: Pick<LockSet, 'caps'>, members: MemberView[]): string {
  return members
    .flatMap(({ label, failure }) =>
      failure ? [set.caps.total > 1 ? `${label}: ${failure.reason}` : failure.reason] : [],
    )
    .join('; ');
}
