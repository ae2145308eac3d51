// Connect to every instance in parallel without waiting on stragglers: once a quorum is
// connected, the others get only `graceMs` more, so one hung Redlock instance (SIGSTOPped,
// black-holed) costs a run that grace, not the whole --connect-timeout. Without a grace
// (status, release) every attempt is waited for, so all instances can be shown.

import { UsageError } from '../../errors.js';
import { connect, retryableFailure, type Instance } from './client/client.js';
import { InstanceUnavailableError } from './client/failure.js';
import type { RedisTarget } from './client/target.js';
import { sleep } from '../../clock.js';
import type { MemberFailure } from './lockset.js';
import { quorumSize } from './quorum.js';

export interface Connected {
  /** Connected instances, in the order the targets were given. */
  instances: Instance[];
  /** Each target that is not connected, and why. */
  failures: MemberFailure[];
}

/** `known[i]`, when set, is why target i cannot be reached already (its host did not resolve): it is not tried. */
export async function connectQuorum(
  targets: RedisTarget[],
  timeoutMs: number,
  graceMs?: number,
  known: (string | undefined)[] = [],
): Promise<Connected> {
  const results: (Instance | Error | undefined)[] = targets.map(() => undefined);
  let connected = 0;
  let quorumConnected!: () => void;
  const quorum = new Promise<void>((resolve) => (quorumConnected = resolve));
  const attempts = targets.map((target, i) =>
    known[i] !== undefined
      ? Promise.resolve(undefined)
      : connect(target, timeoutMs).then(
          (instance) => {
            results[i] = instance;
            if (++connected === quorumSize(targets.length)) quorumConnected();
            return instance;
          },
          (error: Error) => {
            results[i] = error;
            return undefined;
          },
        ),
  );
  const graceOver = new AbortController();
  await Promise.race([
    Promise.all(attempts),
    ...(graceMs === undefined ? [] : [quorum.then(() => sleep(graceMs, graceOver.signal))]),
  ]);
  graceOver.abort();

  const instances: Instance[] = [];
  const failures: MemberFailure[] = [];
  results.forEach((result, i) => {
    const { label } = targets[i];
    if (known[i] !== undefined) failures.push(retryableFailure(label, known[i]));
    else if (result instanceof InstanceUnavailableError) failures.push(result.failure);
    else if (result instanceof Error) failures.push(retryableFailure(label, result.message));
    else if (result) instances.push(result);
    else {
      failures.push(retryableFailure(label, `not connected ${graceMs}ms after a quorum was`));
      void attempts[i].then((late) => late?.client.disconnect());
    }
  });
  // A URL the server cannot serve (a database it lacks) is the user's to fix: 64, not a "no".
  const usage = results.find((result) => result instanceof UsageError);
  if (usage) {
    for (const { client } of instances) client.disconnect();
    throw usage;
  }
  return { instances, failures };
}
