// What a hold says when members of the store fail but the lock goes on: a hold on a quorum that
// lost redundancy (once per change of the failing set) or had a member re-taken, a wait riding
// out an outage or falling back to polling, and an attempt whose undo failed. The store and its
// members are named as its capabilities say ("Redis", "Redis instances").

import { formatDuration } from '../duration.js';
import type { Logger } from '../log.js';
import { type Capabilities, failureText, type MemberFailure, type RedundancyChange } from '../backend/index.js';
import { expiresText } from './release-report.js';

/** Two members make a quorum of 2: both must answer, so either one failing stops the lock. */
export function warnTwoInstances(log: Logger, key: string, caps: Capabilities): void {
  if (caps.total !== 2) return;
  const text =
    `${key}: 2 ${caps.members.noun} make ${caps.name.replace(/ of 2$/, '')} that needs both of them ` +
    '(no fault tolerance: either one' +
    ' down makes dlock fail); use one URL, or three or more';
  log.warn(text, { event: 'warning', key, instances: 2 });
}

export function logRedundancy(
  log: Logger,
  caps: Capabilities,
  key: string,
  fence: string,
  change: RedundancyChange | undefined,
): void {
  if (!change) return;
  const { total, quorum } = caps;
  const members = caps.members.noun;
  if (change.kind === 'restored') {
    log.event('restored', { key, fence, instances: total }, `${key} is held on all ${total} ${members} again`);
    return;
  }
  const { failing } = change;
  const answered = total - failing.length;
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
    `${key} is held on ${answered} of ${total} ${members} (${quorum} needed; ` +
      `${slack === 0 ? 'one more failure loses the lock' : `${slack} more may fail`}); failing: ${errors}`,
  );
}

export function logOutage(
  log: Logger,
  caps: Capabilities,
  key: string,
  waitMs: number | undefined,
  failures: MemberFailure[],
): void {
  const until =
    waitMs === undefined ? 'as long as it takes (no --wait)' : `until --wait ${formatDuration(waitMs)} runs out`;
  const errors = failures.map(failureText).join('; ');
  log.event(
    'outage',
    { key, error: errors },
    `${caps.store} is unreachable while waiting for ${key} (${errors}); retrying ${until}`,
  );
}

export function logOutageOver(log: Logger, caps: Capabilities, key: string): void {
  log.event('restored', { key }, `${caps.store} answers again; still waiting for ${key}`);
}

/** A failed attempt (busy, interrupted) whose undo failed somewhere: one warning line (`ttlMs`: the lease applied). */
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
export function logNotLeft(log: Logger, caps: Capabilities, key: string, failure: MemberFailure): void {
  const lapses = `the place lapses within ${formatDuration(caps.placeLeaseMs ?? 0)}`;
  const text = `could not leave the line of ${key} on ${failureText(failure)} (${lapses})`;
  log.warn(text, { event: 'not-left', key, instance: failure.label, error: failure.reason });
}

/** Waiting without the release channel: one warning, then polling alone. */
export function logPollOnly(log: Logger, caps: Capabilities, key: string, failures: MemberFailure[]): void {
  const errors = failures.map(failureText).join('; ');
  log.event(
    'poll-only',
    { key, error: errors },
    `cannot subscribe to ${key}'s release channel (${errors}); waiting by polling, so a release is noticed within ` +
      `${formatDuration(caps.pollCapMs)} instead of at once`,
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
