// --sync-replicas n: WAIT until n replicas have the lock and the fence on a quorum of instances.

import { UnavailableError } from '../errors.js';
import { fanOut, type LockSet } from '../redlock/lockset.js';
import { tally } from '../redlock/quorum.js';
import { withTimeout } from '../timeout.js';

export async function syncReplicas(set: LockSet, replicas: number, timeoutMs: number): Promise<void> {
  const acks = await fanOut(
    set,
    (i) => withTimeout(i.client.call('WAIT', replicas, timeoutMs) as Promise<number>, timeoutMs + set.timeoutMs),
    (count) => count >= replicas,
  );
  if (tally(acks.outcomes, set.total) === 'won') return;
  const short = set.instances.map((i, n) => `${i.target.label}: ${acks.values[n] ?? 'no answer'} of ${replicas}`).join('; ');
  throw new UnavailableError(`--sync-replicas ${replicas}: too few replicas acknowledged the lock within ${timeoutMs}ms (${short})`);
}
