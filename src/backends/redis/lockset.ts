// One lock across N >= 1 independent instances: one Redis (a server, Sentinel, Cluster) runs the
// line, several run Redlock (strategy.ts). The fan-out below serves both.

import type { LockKeys } from './lock/keys.js';
import type { HoldMode } from '../../backend/mode.js';
import {
  disconnectAll,
  instanceFailure,
  retryableFailure,
  type Instance,
  type MemberFailure,
} from './client/client.js';
import type { Capabilities } from '../../backend/capabilities.js';
import { quorumSize, type Outcome } from './quorum.js';

export type { MemberFailure } from './client/client.js';

export interface LockSet {
  /** The instances we are connected to (unreachable ones are missing: they count as "no"). */
  instances: Instance[];
  /** How many instances are configured, reachable or not: the quorum is counted over these. */
  total: number;
  /** Each instance that could not be connected to. */
  unreachable: MemberFailure[];
  keys: LockKeys;
  /** The key prefix every lock's keys are under. */
  prefix: string;
  /** The targets' labels in the order they were given: every per-instance list is in it. */
  order: string[];
  /** One owner token for all instances and every retry of one acquire. */
  owner: string;
  ttlMs: number;
  /** Per-instance timeout for one script call. */
  timeoutMs: number;
  /** --connect-timeout: how long an outage may last before it is an error (69). */
  connectTimeoutMs: number;
  /** Alone (the default), --shared, or one of --slots n (one instance only). */
  mode: HoldMode;
  /** What the backend can do, decided once from the targets when the set is opened (strategy.ts reads it). */
  caps: Capabilities;
}

/** Disconnect from every instance of the set (the `finally` of every use; a set half-opened too). */
export function close(set: Pick<LockSet, 'instances'>): void {
  disconnectAll(set.instances);
}

export interface FanOut<T> {
  outcomes: Outcome[];
  values: (T | undefined)[];
  /** Every instance that failed, unreachable ones included. */
  failures: MemberFailure[];
  /** Per instance: its failure, if it failed. */
  failed: (MemberFailure | undefined)[];
}

/**
 * Run `op` on every instance in parallel and classify each answer with `yes`. With
 * `quorumGraceMs`, stragglers get only that much longer once a quorum said yes: one hung
 * instance then costs a round that grace, not its whole timeout (it counts as an error).
 */
export async function fanOut<T>(
  set: LockSet,
  op: (instance: Instance) => Promise<T>,
  yes: (value: T) => boolean,
  quorumGraceMs?: number,
): Promise<FanOut<T>> {
  const settled: (PromiseSettledResult<T> | undefined)[] = set.instances.map(() => undefined);
  await new Promise<void>((resolve) => {
    let pending = set.instances.length;
    let yeses = 0;
    let grace: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(grace);
      resolve();
    };
    if (pending === 0) return done();
    set.instances.forEach((instance, i) => {
      void op(instance).then(
        (value) => {
          settled[i] = { status: 'fulfilled', value };
          if (yes(value) && ++yeses === quorumSize(set.total) && quorumGraceMs !== undefined)
            grace = setTimeout(done, quorumGraceMs);
          if (--pending === 0) done();
        },
        (reason: unknown) => {
          settled[i] = { status: 'rejected', reason };
          if (--pending === 0) done();
        },
      );
    });
  });
  const result: FanOut<T> = { outcomes: [], values: [], failures: [], failed: [] };
  settled.forEach((s, i) => {
    if (s?.status === 'fulfilled') {
      result.outcomes.push(yes(s.value) ? 'yes' : 'no');
      result.values.push(s.value);
    } else {
      result.outcomes.push('error');
      result.values.push(undefined);
      const { label } = set.instances[i].target;
      const failure = s
        ? instanceFailure(label, s.reason)
        : retryableFailure(label, `no answer within ${quorumGraceMs}ms after a quorum answered`);
      result.failed[i] = failure;
      result.failures.push(failure);
    }
  });
  result.failures.push(...set.unreachable);
  return result;
}

/** After a round a quorum won: the instances that did not say yes (errors, and `no` with why). */
export function notWith<T>(set: LockSet, round: FanOut<T>, no: string): MemberFailure[] {
  const refused = set.instances.flatMap((instance, i) =>
    round.outcomes[i] === 'no' ? [retryableFailure(instance.target.label, no)] : [],
  );
  return [...refused, ...round.failures];
}
