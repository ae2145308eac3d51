// What `dlock run` says after releasing: nothing unusual unless the release went wrong. A
// release that failed, or found the lock no longer ours, is a warning even without -v: the
// lock may stay until its TTL runs out, or the command may have run unprotected.

import { formatDuration } from '../duration.js';
import type { Logger } from '../log.js';
import { exitFields, parseCount } from '../untrusted.js';
import { type Capabilities, type MemberRelease } from '../backend/index.js';

export interface ReleaseContext {
  key: string;
  fence: string;
  /** What the store is: its quorum, and how it names its members. */
  caps: Capabilities;
  /** The loss was reported already: "no longer ours" is expected, not news. */
  lost: boolean;
  /** How long until the lock expires by itself (the bound for one we could not release). */
  expiresInMs: number;
  /** How the run ended, as the history records it ("0" … "255", "lost"; "" when no command ran). */
  exit?: string;
  /** Why dlock ended the job ("max-hold", "heartbeat-missed"), as the history's `reason`; "" or none: it did not. */
  reason?: string;
  /** The command's own status when dlock ended it, as the history's `command_exit`; "" or none: not known. */
  commandExit?: string;
}

export function reportRelease(log: Logger, releases: MemberRelease[], context: ReleaseContext): void {
  const { key, fence } = context;
  // The released event carries the run's exit (as the history does), for --on-event hooks; for a job
  // dlock stopped (exit 124), why (`stopped_by`: the event's `reason` says why a release failed) and
  // the command's own status (`command_exit`), as the history's `reason` and `command_exit`.
  const exit = {
    ...(context.exit ? exitFields(context.exit) : {}),
    ...(context.reason ? { stopped_by: context.reason } : {}),
    ...(context.commandExit ? { command_exit: parseCount(context.commandExit, 0, 255) ?? null } : {}),
  };
  const failed = releases.filter(({ outcome }) => outcome.kind === 'failed');
  if (failed.length > 0) logReleaseFailed(log, releases, context);
  logUnannounced(log, context.caps, releases, key, fence);
  const released = releases.filter(
    ({ outcome }) => outcome.kind === 'released' || outcome.kind === 'released-or-expired',
  );
  const notOurs = releases.filter(({ outcome }) => outcome.kind === 'not-ours').length;
  // Closed by `dlock release --force` (the release script tells it from an expiry or a new holder).
  const forced = releases.filter(({ outcome }) => outcome.kind === 'not-ours' && outcome.forced).length;
  const unsure = released.flatMap(({ label, outcome }) =>
    outcome.kind === 'released-or-expired' ? [`${label}: ${outcome.reason}`] : [],
  );
  if (notOurs >= context.caps.quorum && !context.lost) {
    const byForce = forced >= context.caps.quorum;
    const why = byForce
      ? `${key} was removed by dlock release --force before its release (fence ${fence})`
      : `${key} was no longer ours at release (it expired or was taken, fence ${fence})`;
    const text = `${why}: the command may have run unprotected`;
    const fields = { key, fence, released: false, reason: 'not-ours', ...(byForce ? { forced: true } : {}), ...exit };
    log.event('released', fields, text, 'warn');
  } else if (released.length === 0) {
    log.event(
      'released',
      { key, fence, released: false, ...exit },
      failed.length > 0 ? `${key} was not released` : `${key} was no longer ours to release`,
    );
  } else if (unsure.length > 0) {
    // The first attempt may have deleted it (its reply was lost), or the lock expired before it.
    const text =
      `released ${key} (fence ${fence}), or it had expired just before: the first release's reply was ` +
      `lost (${unsure.join('; ')}) and the retry found it no longer ours`;
    log.event('released', { key, fence, released: true, confirmed: false, ...exit }, text);
  } else {
    log.event('released', { key, fence, released: true, ...exit }, `released ${key} (fence ${fence})`);
  }
}

/** A warning per member that released but could not tell the waiters (Redis: PUBLISH refused, no +publish). */
export function logUnannounced(
  log: Logger,
  caps: Capabilities,
  releases: MemberRelease[],
  key: string,
  fence?: string,
): void {
  for (const { label } of releases.filter(({ outcome }) => outcome.kind === 'released' && !outcome.notified)) {
    const polling = `they notice by polling, within ${formatDuration(caps.pollCapMs)}`;
    const refused = caps.notifyDenied
      ? `${label} refused to tell the waiters (${caps.notifyDenied})`
      : `${label} could not tell the waiters`;
    const text = `released ${key}, but ${refused}; ${polling}`;
    log.warn(text, { event: 'unannounced', key, ...(fence === undefined ? {} : { fence }), instance: label });
  }
}

/** One line naming every instance where the release failed, and when the lock frees by itself. */
function logReleaseFailed(log: Logger, releases: MemberRelease[], { key, fence, expiresInMs }: ReleaseContext): void {
  const failed = releases.flatMap(({ label, outcome }) =>
    outcome.kind === 'failed' ? [{ label, reason: outcome.reason }] : [],
  );
  const where = failed.map(({ label, reason }) => `${label}: ${reason}`).join('; ');
  log.event(
    'release-failed',
    {
      key,
      fence,
      instance: failed.map(({ label }) => label).join(' '),
      error: where,
      expires_in_ms: Math.max(0, Math.round(expiresInMs)),
    },
    `could not release ${key} on ${where} (it expires by itself ${expiresText(expiresInMs)})`,
  );
}

export function expiresText(expiresInMs: number): string {
  return expiresInMs > 0 ? `within ${formatDuration(expiresInMs)}` : 'by now';
}
