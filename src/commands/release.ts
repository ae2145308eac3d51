// dlock release --force <key>: the operator's escape hatch. Deletes the lock whoever holds
// it (the fence counter stays, so tokens keep increasing) and says whom it removed.

import type { ConnectionConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { forceReleaseOn } from '../lock/inspect.js';
import { describeError, disconnectAll } from '../redis/client.js';
import { failureText } from '../redlock/lockset.js';
import { openLockSet, unavailable } from '../redlock/open.js';
import { describeHolder } from './holder-text.js';

export async function release(config: ConnectionConfig, key: string, options: { force: boolean }, out = process.stdout): Promise<number> {
  if (!options.force) {
    throw new UsageError(`release breaks a lock someone else holds; to do that, run: dlock release --force ${key}`);
  }
  const set = await openLockSet(config, key);
  try {
    const results = await Promise.allSettled(set.instances.map((instance) => forceReleaseOn(instance, set.keys, set.timeoutMs)));
    const removed = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
    const failed = [
      ...results.flatMap((r, i) => (r.status === 'rejected' ? [`${set.instances[i].target.label}: ${describeError(r.reason)}`] : [])),
      ...set.unreachable.map(failureText),
    ];
    // An instance we could not reach may still hold the lock: say so, and fail if it can matter.
    for (const failure of failed) process.stderr.write(`dlock: release --force: ${key} not released on ${failure}\n`);
    if (removed.length === 0 && failed.length > 0) throw unavailable(set.total, failed);
    if (removed.length === 0) {
      out.write(`${key}: not held; nothing released\n`);
      return 1;
    }
    const owners = new Map(removed.map((holder) => [holder.owner, holder]));
    for (const holder of owners.values()) {
      out.write(`${key}: released the lock ${describeHolder(holder)}${holder.cmd ? ` (command: ${holder.cmd})` : ''}\n`);
    }
    return 0;
  } finally {
    disconnectAll(set.instances);
  }
}
