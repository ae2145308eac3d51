// Connect to every instance in parallel without waiting on stragglers: once a quorum is
// connected, the others get only `graceMs` more, so one hung Redlock instance (SIGSTOPped,
// black-holed) costs a run that grace, not the whole --connect-timeout. Without a grace
// (status, release) every attempt is waited for, so all instances can be shown.

import { UsageError } from '../errors.js';
import { connect, type Instance } from '../redis/client.js';
import type { RedisTarget } from '../redis/url.js';
import { sleep } from '../timeout.js';
import { quorumSize } from './quorum.js';

export interface Connected {
  /** Connected instances, in the order the targets were given. */
  instances: Instance[];
  /** "label: reason" for each target that is not connected. */
  errors: string[];
}

export async function connectQuorum(targets: RedisTarget[], timeoutMs: number, graceMs?: number): Promise<Connected> {
  const results: (Instance | Error | undefined)[] = targets.map(() => undefined);
  let connected = 0;
  let quorumConnected!: () => void;
  const quorum = new Promise<void>((resolve) => (quorumConnected = resolve));
  const attempts = targets.map((target, i) =>
    connect(target, timeoutMs).then(
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
  await Promise.race([Promise.all(attempts), ...(graceMs === undefined ? [] : [quorum.then(() => sleep(graceMs, graceOver.signal))])]);
  graceOver.abort();

  const instances: Instance[] = [];
  const errors: string[] = [];
  results.forEach((result, i) => {
    if (result instanceof Error) errors.push(result.message.replace(/^cannot reach /, ''));
    else if (result) instances.push(result);
    else {
      errors.push(`${targets[i].label}: not connected ${graceMs}ms after a quorum was`);
      void attempts[i].then((late) => late?.client.disconnect());
    }
  });
  // A URL the server cannot serve (a database it lacks) is the user's to fix: 64, not a "no".
  const usage = results.find((result) => result instanceof UsageError);
  if (usage) {
    for (const { client } of instances) client.disconnect();
    throw usage;
  }
  return { instances, errors };
}
