// What a hold says when Redis instances fail but the lock goes on: a held Redlock that lost
// redundancy (once per change of the failing set) or had an instance re-taken, a wait riding
// out an outage or falling back to polling, and an attempt whose undo failed.

import { formatDuration } from '../duration.js';
import type { Logger } from '../log.js';
import {
  failureText,
  type MemberFailure,
  PLACE_LEASE_MS,
  POLL_CAP_MS,
  quorumSize,
  type RedundancyChange,
} from '../backends/redis/index.js';
import { expiresText } from './release-report.js';

/** Two Redis URLs make a Redlock quorum of 2: both must answer, so either one failing stops the lock. */
export function warnTwoInstances(log: Logger, key: string, total: number): void {
  if (total !== 2) return;
  const text =
    `${key}: 2 Redis instances make a Redlock quorum that needs both of them (no fault tolerance: either one` +
    ' down makes dlock fail); use one URL, or three or more';
  log.warn(text, { event: 'warning', key, instances: 2 });
}

export function logRedundancy(
  log: Logger,
  key: string,
  fence: string,
  total: number,
  change: RedundancyChange | undefined,
): void {
  if (!change) return;
  if (change.kind === 'restored') {
    log.event('restored', { key, fence, instances: total }, `${key} is held on all ${total} Redis instances again`);
    return;
  }
  const { failing } = change;
  const answered = total - failing.length;
  const quorum = quorumSize(total);
  const slack = answered - quorum;
  const errors = failing.map(failureText).join('; ');
  log.event(
    'degraded',
    {
      key,
      fence,
      instances: total,
      answered,
      quorum,
      failing: failing.map(({ label }) => label).join(' '),
      error: errors,
    },
    `${key} is held on ${answered} of ${total} Redis instances (${quorum} needed; ` +
      `${slack === 0 ? 'one more failure loses the lock' : `${slack} more may fail`}); failing: ${errors}`,
  );
}

export function logOutage(log: Logger, key: string, waitMs: number | undefined, failures: MemberFailure[]): void {
  const until =
    waitMs === undefined ? 'as long as it takes (no --wait)' : `until --wait ${formatDuration(waitMs)} runs out`;
  const errors = failures.map(failureText).join('; ');
  log.event(
    'outage',
    { key, error: errors },
    `Redis is unreachable while waiting for ${key} (${errors}); retrying ${until}`,
  );
}

export function logOutageOver(log: Logger, key: string): void {
  log.event('restored', { key }, `Redis answers again; still waiting for ${key}`);
}

/** A failed attempt (busy, interrupted) whose undo failed somewhere: one warning line. */
export function logNotUndone(
  log: Logger,
  config: { key: string; ttlMs: number },
  unreleased: Pick<MemberFailure, 'label' | 'reason'>[],
): void {
  const errors = unreleased.map(failureText).join('; ');
  log.event(
    'release-failed',
    {
      key: config.key,
      instance: unreleased.map(({ label }) => label).join(' '),
      error: errors,
      expires_in_ms: config.ttlMs,
    },
    `could not undo the attempt on ${config.key} on ${errors} (a lock it took there expires by itself ` +
      `${expiresText(config.ttlMs)})`,
  );
}

/** An interrupted wait that could not leave the line (a grant missing): its place lapses by itself. */
export function logNotLeft(log: Logger, key: string, failure: MemberFailure): void {
  const lapses = `the place lapses within ${formatDuration(PLACE_LEASE_MS)}`;
  const text = `could not leave the line of ${key} on ${failureText(failure)} (${lapses})`;
  log.warn(text, { event: 'not-left', key, instance: failure.label, error: failure.reason });
}

/** Waiting without the release channel: one warning, then polling alone. */
export function logPollOnly(log: Logger, key: string, failures: MemberFailure[]): void {
  const errors = failures.map(failureText).join('; ');
  log.event(
    'poll-only',
    { key, error: errors },
    `cannot subscribe to ${key}'s release channel (${errors}); waiting by polling, so a release is noticed within ` +
      `${formatDuration(POLL_CAP_MS)} instead of at once`,
  );
}

export function logRetaken(log: Logger, key: string, fence: string, retaken: string[]): void {
  log.event(
    'retaken',
    { key, fence, instance: retaken.join(' ') },
    `${key} was gone from ${retaken.join(', ')} (a restart without persistence, an eviction) and is held there ` +
      `again: re-taken while a majority still held it (fence raised to ${fence})`,
  );
}
