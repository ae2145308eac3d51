// Take an etcd lock, waiting as the user asked: grant the owner's lease, join the line, and while
// not first watch the predecessor, keeping the lease alive every ttl/3. Before the lock is reported
// taken, one keepalive and one read check that the lease and the key are still there (etcd 3.4's
// mutex does not: a waiter whose lease ran out still ran its command). A waiter that lost its
// place (its lease ran out in an outage, or release --force removed it) joins again at the end.
// With --supersede (supersede.ts) its first join puts the lock's register (its ticket: that
// revision) and deletes the older --supersede waiters' keys; while it waits it watches its whole line
// (at most one --supersede waiter is ever in line) and reads the register each time it wakes and
// before it rejoins or starts: a newer ticket there and it leaves with the conflict code.

import type { NotObtained, ObtainOptions, Obtained } from '../../backend/backend.js';
import type { MemberFailure } from '../../backend/failure.js';
import type { HolderMeta } from '../../backend/holder.js';
import { now, sleep } from '../../clock.js';
import { instanceTimeoutMs } from '../../timing.js';
import { WATCH_RENEW_MS } from './connection.js';
import { GatewayError } from './gateway.js';
import { holderValue, registerValue } from './holders.js';
import { dropOlder, registerKey, supersededSince } from './supersede.js';
import { grant, keepAlive } from './lease.js';
import { ahead, deleted, join, readKey } from './line.js';
import { leave, type EtcdHold } from './release.js';

export async function obtain(
  hold: EtcdHold,
  meta: HolderMeta,
  options: ObtainOptions,
): Promise<Obtained | NotObtained> {
  const start = now();
  // A hold without an end (until `dlock unhold`): etcd's longest lease, as no process keeps it alive.
  if (meta.hold?.forever) hold.ttlMs = FOREVER_TTL_MS;
  const deadline = options.waitMs === undefined ? Infinity : start + options.waitMs;
  const waited = () => Math.round(now() - start);
  // Once in line, a wait longer than --connect-timeout rides out an outage (a restart, a leader
  // election); before that, an unreachable etcd is 69 within --connect-timeout.
  const ridesOut = options.waitMs === undefined || options.waitMs > hold.connectTimeoutMs;
  let inLine = false;
  let outage: { since: number; retries: number; reported: boolean } | undefined;
  let keeper: LeaseKeeper | undefined;
  let value: string | undefined;
  /** Watches of one predecessor in a row that ended by themselves or reported a forged deletion. */
  let watchEnds = 0;
  let lastWatched: string | undefined;
  let reportedDeleted: string | undefined;
  const supersede = options.keyOptions.supersede === true;
  /** --supersede: the revision of the first join, which put the register; undefined until then. */
  let ticket: string | undefined;
  const superseded = async () =>
    ticket === undefined ? undefined : supersededSince(hold.gateway, hold.lockPrefix, ticket, hold.timeoutMs);

  // A lease granted, or a grant or join that got no answer (it may have made the lease, and a place in line).
  let maybeMade = false;
  const giveUp = async (result: NotObtained): Promise<NotObtained> => {
    keeper?.stop();
    if (!inLine && !maybeMade) return result;
    // Out of line, one short attempt only (the store was not answering): the lease expires by itself.
    const undo = { boundMs: Math.min(hold.timeoutMs, UNDO_MS), retry: false };
    const failure = await leave(hold, inLine ? undefined : undo);
    return failure ? { ...result, unreleased: [{ label: failure.label, reason: failure.reason }] } : result;
  };

  for (;;) {
    if (options.signal.aborted) return giveUp({ kind: 'aborted', waitedMs: waited(), unreleased: [] });
    const sentAt = now();
    try {
      if (!inLine) {
        hold.ttlMs = await grant(hold.gateway, hold.lease, hold.ttlMs, hold.timeoutMs);
        // Requests are sized by the lease etcd applied, and a lease granted is revoked when given up.
        hold.timeoutMs = instanceTimeoutMs(hold.connectTimeoutMs, hold.ttlMs, 1);
        maybeMade = true;
        keeper?.stop();
        keeper = new LeaseKeeper(hold, sentAt);
        value ??= holderValue(meta, hold.ttlMs, supersede);
        // A waiter that lost its place joins again only while no newer --supersede waiter came.
        const by = await superseded();
        if (by) return giveUp({ kind: 'superseded', by, waitedMs: waited(), unreleased: [] });
        const register =
          supersede && ticket === undefined
            ? { key: registerKey(hold.lockPrefix), value: registerValue(meta) }
            : undefined;
        const joined = await join(
          hold.gateway,
          hold.lockPrefix,
          hold.holdKey,
          hold.lease,
          value,
          hold.timeoutMs,
          register,
        );
        inLine = true;
        hold.myRev = joined.myRev;
        if (register) ticket = joined.myRev;
        if (joined.first?.createRevision === joined.myRev) {
          keeper.stop();
          return acquired(hold, joined.revision, keeper.renewedAt, waited());
        }
        if (options.waitMs === 0) return giveUp({ kind: 'busy', waitedMs: waited(), unreleased: [] });
        if (register) await dropOlder(hold.gateway, hold.lockPrefix, joined.myRev, hold.timeoutMs);
      }
      if (keeper?.lost) {
        // The lease ran out while waiting (an outage, a frozen process): join again, at the end.
        inLine = false;
        keeper.stop();
        continue;
      }
      // A --supersede waiter reads the register each time it wakes: a newer one may have joined.
      const [line, by] = await Promise.all([
        ahead(hold.gateway, hold.lockPrefix, hold.myRev!, hold.timeoutMs),
        superseded(),
      ]);
      if (by) return giveUp({ kind: 'superseded', by, waitedMs: waited(), unreleased: [] });
      // Over once the store answers all a step asks: first in line, that is the check below too.
      const over = () => {
        if (outage?.reported) options.onOutageOver?.();
        outage = undefined;
      };
      if (line.predecessor) over();
      if (!line.predecessor) {
        // First in line: the lease and the key must still be there before the command starts.
        const checkedAt = now();
        const [ttl, own, by] = await Promise.all([
          keepAlive(hold.gateway, hold.lease, hold.timeoutMs),
          readKey(hold.gateway, hold.holdKey, hold.timeoutMs),
          superseded(),
        ]);
        over();
        if (by) return giveUp({ kind: 'superseded', by, waitedMs: waited(), unreleased: [] });
        if (ttl !== undefined && own?.createRevision === hold.myRev) {
          keeper!.stop();
          return acquired(hold, line.revision, checkedAt, waited());
        }
        inLine = false;
        keeper?.stop();
        continue;
      }
      if (now() >= deadline) return giveUp({ kind: 'busy', waitedMs: waited(), unreleased: [] });
      const refused = await options.onWait?.(waited(), line.place);
      if (refused && refused.length > 0)
        return giveUp({ kind: 'unavailable', errors: refused, waitedMs: waited(), unreadable: true, unreleased: [] });
      // A watch that ends by itself without the deletion, or breaks (a line that never ends), or
      // reports a deletion a read then denies (forged): a gateway or proxy that does that at once
      // would be re-watched in a busy loop; pause, longer each time until the predecessor changes.
      // An etcd that is down fails the next read, which the outage handling takes over.
      const pause = () => sleep(Math.max(0, Math.min(retryMs(watchEnds++), deadline - now())), options.signal);
      const watched = `${line.predecessor.key}@${line.predecessor.createRevision}`;
      if (watched !== lastWatched) watchEnds = 0;
      if (watched === reportedDeleted) await pause();
      lastWatched = watched;
      const watch = { key: line.predecessor.key, wholeLine: supersede };
      const outcome = await watchUntil(hold, watch, line.revision, deadline, options.signal, keeper!);
      // A change anywhere in the line wakes a --supersede waiter: no sign of a forged deletion.
      reportedDeleted = outcome === 'deleted' && !supersede ? watched : undefined;
      if (outcome === 'ended') await pause();
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const failure = error.failure;
      if (!inLine && !failure.errorReply && failure.reason !== 'connection refused') maybeMade = true;
      const at = now();
      outage ??= { since: sentAt, retries: 0, reported: false };
      const outageMs = Math.round(at - outage.since);
      const errors: MemberFailure[] = [failure];
      if (failure.permanent || (!(inLine && ridesOut) && outageMs >= hold.connectTimeoutMs))
        return giveUp({ kind: 'unavailable', errors, waitedMs: waited(), unreleased: [] });
      if (at >= deadline)
        return giveUp({
          kind: 'unavailable',
          errors,
          waitedMs: waited(),
          ...(inLine ? { outageMs } : {}),
          unreleased: [],
        });
      if (inLine && !outage.reported && outageMs >= hold.connectTimeoutMs) {
        outage.reported = true;
        options.onOutage?.(errors);
      }
      // Before the wait rides outages out, the pause ends by --connect-timeout: 69 comes within it.
      const budget = inLine && ridesOut ? Infinity : outage.since + hold.connectTimeoutMs - now();
      await sleep(Math.max(0, Math.min(retryMs(outage.retries++), deadline - now(), budget)), options.signal);
    }
  }
}

function acquired(hold: EtcdHold, revision: string, startedAt: number, waitedMs: number): Obtained {
  return {
    kind: 'acquired',
    fence: hold.myRev!,
    startedAt,
    waitedMs,
    failures: [],
    env: { ETCD_LOCK_KEY: hold.holdKey, ETCD_LOCK_REV: revision },
  };
}

/**
 * Watch the predecessor until it is deleted ('deleted'), the wait runs out, the signal aborts, or
 * the lease is lost ('stopped'); 'ended' when the stream closed without the deletion, or broke (a
 * failure a retry may cure). `wholeLine` (a --supersede waiter): any change in the line ends the
 * watch as 'deleted' (the line and the own key are read again).
 */
async function watchUntil(
  hold: EtcdHold,
  { key, wholeLine }: { key: string; wholeLine: boolean },
  revision: string,
  deadline: number,
  signal: AbortSignal,
  keeper: LeaseKeeper,
): Promise<'deleted' | 'ended' | 'stopped'> {
  // Aborted (a signal) or lost while the line was read: an abort event that already fired never fires again.
  if (signal.aborted || keeper.lost) return 'stopped';
  const controller = new AbortController();
  const stop = () => controller.abort();
  signal.addEventListener('abort', stop, { once: true });
  keeper.onLost = stop;
  // Re-made at least every WATCH_RENEW_MS: a watch a proxy or the runtime dropped silently is not waited on for ever.
  const timer = setTimeout(stop, Math.max(0, Math.min(deadline - now(), WATCH_RENEW_MS)));
  try {
    const range = wholeLine ? hold.lockPrefix : undefined;
    if (await deleted(hold.gateway, key, revision, controller.signal, hold.timeoutMs, range)) return 'deleted';
    return controller.signal.aborted ? 'stopped' : 'ended';
  } catch (error) {
    if (!(error instanceof GatewayError) || error.failure.permanent) throw error;
    return 'ended';
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
    keeper.onLost = undefined;
  }
}

/** Keeps the lease of a waiter alive every ttl/3 while it waits; `lost` once etcd says it is gone. */
class LeaseKeeper {
  lost = false;
  /** Ends the watch in progress: the lease is gone, or a keepalive came back (the line is read again). */
  onLost: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly hold: EtcdHold,
    /** Monotonic ms the last keepalive (or the grant) that succeeded was sent. */
    public renewedAt: number,
  ) {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    // Capped to what a timer takes (2^31 − 1 ms): a hold's lease may be years long.
    const every = Math.min(2 ** 31 - 1, Math.max(1, Math.floor(this.hold.ttlMs / 3)));
    this.timer = setTimeout(() => void this.renew(), every);
  }

  private async renew(): Promise<void> {
    const sentAt = now();
    try {
      const ttl = await keepAlive(this.hold.gateway, this.hold.lease, this.hold.timeoutMs);
      if (ttl === undefined) {
        this.lost = true;
        this.onLost?.();
        return;
      }
      this.renewedAt = sentAt;
      // The line is read again and the watch made anew at each keepalive (every ttl/3): a watch that
      // hangs on a frozen member, or gets no events through a buffering proxy, delays the turn by
      // that much at most; and it is made where requests go now.
      this.onLost?.();
    } catch {
      // An outage, or the member frozen: the watch may hang on it as well, so it is made again (on
      // the endpoint requests fail over to); the lease may still be there when the outage is over.
      this.onLost?.();
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** The lease of a hold without an end: etcd's longest (9e9 s, about 285 years). */
const FOREVER_TTL_MS = 9_000_000_000_000;

/** How long undoing an attempt that got no answer may add to the --connect-timeout it ran out. */
const UNDO_MS = 250;

/** Pause between attempts while etcd cannot be reached: 100 ms doubling to 2 s, jittered. */
function retryMs(retries: number, random = Math.random()): number {
  return Math.round(Math.min(100 * 2 ** Math.min(retries, 10), 2_000) * (0.5 + random));
}
