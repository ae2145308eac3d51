// Acquire, waiting as long as the user asked: --no-wait, --wait <d>, or forever.

import type { HolderMeta } from '../lock/acquire.js';
import { isPermanentFailure } from '../redis/client.js';
import { now, sleep } from '../timeout.js';
import { tryAcquire } from './acquire.js';
import type { LockSet } from './lockset.js';
import { pollDelayMs, ReleaseWatcher } from './waiter.js';

export type Obtained = { kind: 'acquired'; fence: string; startedAt: number; waitedMs: number };
export type NotObtained =
  | { kind: 'busy'; waitedMs: number }
  | { kind: 'aborted'; waitedMs: number }
  | { kind: 'unavailable'; errors: string[]; waitedMs: number };

export interface ObtainOptions {
  /** undefined: forever; 0: a single attempt. */
  waitMs: number | undefined;
  signal: AbortSignal;
  /** Called each time the lock is found busy and we are about to wait (spinner, verbose log). */
  onWait?: (waitedMs: number) => void | Promise<void>;
}

export async function obtain(set: LockSet, meta: HolderMeta, options: ObtainOptions): Promise<Obtained | NotObtained> {
  const start = now();
  const deadline = options.waitMs === undefined ? Infinity : start + options.waitMs;
  let watcher: ReleaseWatcher | undefined;
  let unavailableSince: number | undefined;
  try {
    for (;;) {
      const attempt = await tryAcquire(set, meta);
      const waitedMs = Math.round(now() - start);
      if (attempt.kind === 'acquired') return { ...attempt, waitedMs };
      if (options.signal.aborted) return { kind: 'aborted', waitedMs };
      if (attempt.kind === 'unavailable') {
        // A wait rides out an outage of up to --connect-timeout (a restart, a blip); then it is 69.
        unavailableSince ??= now();
        const final = attempt.errors.some(isPermanentFailure);
        if (final || now() >= deadline || now() - unavailableSince >= set.connectTimeoutMs) return { ...attempt, waitedMs };
        await sleep(Math.min(outageRetryMs(set), deadline - now()), options.signal);
        continue;
      }
      unavailableSince = undefined;
      if (now() >= deadline) return { kind: 'busy', waitedMs };
      if (!watcher) {
        // Subscribe only once the lock is found busy (the common uncontended run pays nothing),
        // then try again at once: a release between the attempt and the subscription is not missed.
        watcher = await ReleaseWatcher.start(set, set.timeoutMs);
        continue;
      }
      await options.onWait?.(waitedMs);
      await watcher.next(Math.min(pollDelayMs(attempt.retryInMs), Math.max(0, deadline - now())), options.signal);
    }
  } finally {
    watcher?.stop();
  }
}

/** Pause between attempts while too few instances answer: short, jittered, never a storm. */
function outageRetryMs(set: LockSet): number {
  return Math.max(10, Math.min(set.timeoutMs, 250)) * (0.5 + Math.random());
}
