// The Redis backend behind ../../backend/backend.ts: a lock set over one Redis (a server,
// Sentinel, Cluster: the line, pub/sub wake-ups, place leases, stream history) or a Redlock quorum
// of several (strategy.ts chooses). Each operation is one file of this folder; this class only
// hands it the set, so nothing of the set (instances, keys, WAIT, PUBLISH) crosses the seam.

import type {
  Backend,
  DoneRead,
  ForceRelease,
  HistoryRead,
  LockHandle,
  LockListing,
  LockOptions,
  LockRead,
  MemberRelease,
  Nested,
  NotObtained,
  ObtainOptions,
  Obtained,
  ParentLease,
  ReleaseOptions,
  Renewal,
  RenewOptions,
  TokenRelease,
  TokenRenewal,
  TotalsRead,
} from '../../backend/backend.js';
import type { Capabilities } from '../../backend/capabilities.js';
import type { HolderMeta } from '../../backend/holder.js';
import type { HoldMode } from '../../backend/mode.js';
import { newOwnerToken } from '../../backend/owner.js';
import { instanceTimeoutMs } from '../../timing.js';
import { releaseByToken, renewByToken } from './by-token.js';
import type { RedisConnection } from './connection.js';
import { extendAll } from './extend.js';
import { forceReleaseAll } from './force-release.js';
import { doneMarkOfKey, historyOfKey, totalsOfKey } from './history.js';
import { readLock } from './inspect.js';
import { listLocks } from './list.js';
import { lockKeys } from './lock/keys.js';
import type { HeldLock } from './lock/retake.js';
import { close, type LockSet } from './lockset.js';
import { isHeldBy, isStillHeldBy } from './nested.js';
import { obtain } from './obtain.js';
import { releaseAll } from './release.js';
import { syncReplicas } from './sync-replicas.js';

export class RedisBackend implements Backend {
  constructor(
    private readonly connection: RedisConnection,
    /** The instances, connected; its key, owner and mode are each lock's. */
    private readonly set: LockSet,
  ) {}

  get caps(): Capabilities {
    return this.set.caps;
  }

  lock(key: string, { mode = { kind: 'exclusive' }, owner = newOwnerToken(), ttlMs }: LockOptions = {}): LockHandle {
    const { set } = this;
    // Another lease than the open's (a nested run renews its parent's): each request's timeout follows it.
    const timeoutMs =
      ttlMs === undefined || ttlMs === set.ttlMs
        ? set.timeoutMs
        : instanceTimeoutMs(set.connectTimeoutMs, ttlMs, set.total);
    return new RedisLock(key, {
      ...set,
      keys: lockKeys(set.prefix, key),
      owner,
      mode,
      ttlMs: ttlMs ?? set.ttlMs,
      timeoutMs,
    });
  }

  list(): Promise<LockListing> {
    return listLocks(this.set, this.connection);
  }

  close(): void {
    close(this.set);
  }
}

class RedisLock implements LockHandle {
  /** What Redlock re-takes an instance that lost the key with (set once the lock is obtained). */
  private held: HeldLock | undefined;

  constructor(
    readonly key: string,
    private readonly set: LockSet,
  ) {}

  get owner(): string {
    return this.set.owner;
  }

  get ttlMs(): number {
    return this.set.ttlMs;
  }

  get mode(): HoldMode {
    return this.set.mode;
  }

  get caps(): Capabilities {
    return this.set.caps;
  }

  async obtain(meta: HolderMeta, options: ObtainOptions): Promise<Obtained | NotObtained> {
    const result = await obtain(this.set, meta, options);
    if (result.kind === 'acquired') this.held = { fence: result.fence, meta, startedAt: result.startedAt };
    return result;
  }

  extend(options: RenewOptions): Promise<Renewal> {
    return extendAll(this.set, { ...options, held: this.held });
  }

  release(options: ReleaseOptions = {}): Promise<MemberRelease[]> {
    return releaseAll(this.set, options);
  }

  read(): Promise<LockRead> {
    return readLock(this.set);
  }

  history(count: number): Promise<HistoryRead | undefined> {
    return historyOfKey(this.set, this.set.keys, count);
  }

  totals(): Promise<TotalsRead | undefined> {
    return totalsOfKey(this.set, this.set.keys);
  }

  doneMark(): Promise<DoneRead | undefined> {
    return doneMarkOfKey(this.set, this.set.keys);
  }

  forceRelease(now: boolean, slot?: number): Promise<ForceRelease> {
    return forceReleaseAll(this.set, now, slot);
  }

  heldBy(nested: Nested): Promise<ParentLease | undefined> {
    return isHeldBy(this.set, this.set.owner, nested);
  }

  stillHeld(): Promise<boolean> {
    return isStillHeldBy(this.set, this.set.owner);
  }

  renewByToken(boundMs: number): Promise<TokenRenewal> {
    return renewByToken(this.set, this.set.owner, boundMs);
  }

  releaseByToken(exitStatus: string): Promise<TokenRelease> {
    return releaseByToken(this.set, exitStatus);
  }

  syncReplicas(replicas: number, timeoutMs: number): Promise<void> {
    return syncReplicas(this.set, replicas, timeoutMs);
  }
}
