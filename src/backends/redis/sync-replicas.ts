// --sync-replicas n: WAIT until n replicas have the lock and the fence on a quorum of instances.
// WAIT counts the writes of the connection it is sent on, so on a Cluster it goes to the
// master serving the lock's slot, the connection the acquire went through.
// This narrows the failover window, it does not close it: renewals are not WAITed for, and a
// replica that acknowledged can still lose the race to be promoted.

import { UnavailableError } from '../../errors.js';
import { nodeForKey } from './client/nodes.js';
import { failureText } from './client/client.js';
import { withTimeout } from '../../clock.js';
import { fanOut, type LockSet } from './lockset.js';
import { tally } from './quorum.js';

/** WAIT on every instance; 69 unless a quorum's replicas acknowledged within `timeoutMs`. */
export async function syncReplicas(set: LockSet, replicas: number, timeoutMs: number): Promise<void> {
  const acks = await fanOut(
    set,
    async (i) =>
      withTimeout(
        nodeForKey(i.client, set.keys.lock).call('WAIT', replicas, timeoutMs) as Promise<number>,
        timeoutMs + set.timeoutMs,
      ),
    (count) => count >= replicas,
  );
  if (tally(acks.outcomes, set.total) === 'won') return;
  // WAIT refused (an ACL without +wait): that, not a count of replicas, is the news.
  const refused = acks.failures.filter(({ permanent }) => permanent);
  if (refused.length > 0)
    throw new UnavailableError(
      `--sync-replicas ${replicas}: WAIT refused on ${refused.map(failureText).join('; ')}; released the lock ` +
        'without running the command',
    );
  const short = set.instances
    .map((i, n) => `${i.target.label}: ${acks.values[n] ?? 'no answer'} of ${replicas}`)
    .join('; ');
  throw new UnavailableError(
    `--sync-replicas ${replicas}: too few replicas acknowledged the lock within ${timeoutMs}ms (${short}); ` +
      'released it without running the command',
  );
}
