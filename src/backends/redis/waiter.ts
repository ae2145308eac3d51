// Waiting for a busy lock: subscribe to its release channel on every instance and
// re-poll when the holder's lease would run out, so a release hands over in about one
// round trip and an expiry is noticed when it happens, without polling storms.

import { instanceFailure, MalformedReplyError, type RedisClient } from './client/client.js';
import { subscriberFor } from './client/nodes.js';
import { longTimeout, withTimeout } from '../../clock.js';
import { POLL_CAP_MS } from './lock/limits.js';
import type { MemberFailure, LockSet } from './lockset.js';

/** Sleep before the next poll: the holder's remaining TTL, capped, plus jitter so waiters spread out. */
export function busyRetryMs(retryInMs: number, random: number = Math.random()): number {
  const base = Math.min(retryInMs, POLL_CAP_MS);
  return Math.max(1, Math.round(base + 1 + random * Math.min(base * 0.05, 50)));
}

export class ReleaseWatcher {
  private wake: (() => void) | undefined;
  private released = false;
  /** Instances whose subscription broke the protocol (a malformed message): they are not listened to any more. */
  readonly failures: MemberFailure[] = [];

  private constructor(private readonly subscribers: RedisClient[]) {}

  /**
   * Subscribe on every instance that answers within `timeoutMs`; the others are subscribed when
   * they answer. Where the server refuses for good (an ACL without +subscribe or the channel),
   * waiting relies on polling alone: `pollOnly` is told which, and why.
   */
  static async start(
    set: LockSet,
    channel: string,
    timeoutMs: number,
    pollOnly?: (errors: MemberFailure[]) => void,
  ): Promise<ReleaseWatcher> {
    const subscribers = set.instances.map(({ client }) => subscriberFor(client));
    const watcher = new ReleaseWatcher(subscribers);
    const failed = (i: number) => (error: MalformedReplyError) => {
      subscribers[i].disconnect();
      watcher.failures.push(instanceFailure(set.instances[i].target.label, error));
      watcher.notify();
    };
    const settled = await Promise.allSettled(
      subscribers.map((subscriber, i) =>
        withTimeout(
          listen(subscriber, set, channel, () => watcher.notify(), failed(i)),
          timeoutMs,
        ),
      ),
    );
    // A reply that lies fails the instance; a refusal (ACL) leaves it to polling.
    settled.forEach(
      (s, i) => s.status === 'rejected' && s.reason instanceof MalformedReplyError && failed(i)(s.reason),
    );
    const refused = settled
      .flatMap((s, i) =>
        s.status === 'rejected' && !(s.reason instanceof MalformedReplyError)
          ? [instanceFailure(set.instances[i].target.label, s.reason)]
          : [],
      )
      .filter(({ permanent }) => permanent);
    if (refused.length > 0) pollOnly?.(refused);
    return watcher;
  }

  private notify(): void {
    this.released = true;
    this.wake?.();
  }

  /** Resolve on a release message, after `ms`, or when `signal` aborts. */
  next(ms: number, signal: AbortSignal): Promise<void> {
    if (this.released || signal.aborted) {
      this.released = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        timer.clear();
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        this.released = false;
        resolve();
      };
      const timer = longTimeout(done, ms);
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  stop(): void {
    for (const subscriber of this.subscribers) subscriber.disconnect();
  }
}

/**
 * Subscribe to `channel` (the release channel, or in line this waiter's own); `wake` on a release by someone else, and
 * whenever the
 * connection drops or comes back: a dropped one cannot hear a release (so an outage shows at
 * once), and a release published while it was down is gone (ioredis subscribes again by
 * itself after a reconnect, but cannot replay that). A malformed reply on it (reply-guard.ts)
 * is `failed`: that instance is not listened to again.
 */
function listen(
  subscriber: RedisClient,
  set: LockSet,
  channel: string,
  wake: () => void,
  failed: (error: MalformedReplyError) => void,
): Promise<unknown> {
  let lying = false;
  subscriber.on('error', (error) => {
    if (!(error instanceof MalformedReplyError) || lying) return;
    lying = true;
    failed(error);
  });
  // Our own releases (undoing an attempt) are no news to us.
  subscriber.on('message', (_channel: string, message: string) => message !== set.owner && wake());
  let connectedBefore = false;
  let connected = false;
  subscriber.on('ready', () => {
    if (connectedBefore) wake();
    connectedBefore = connected = true;
  });
  subscriber.on('close', () => {
    if (connected) wake();
    connected = false;
  });
  const subscribed = subscriber.connect().then(() => subscriber.subscribe(channel));
  // The first connect failed (the instance is down): subscribe once it answers.
  subscribed.catch(() => lying || subscriber.once('ready', () => void subscriber.subscribe(channel).catch(() => {})));
  return subscribed;
}
