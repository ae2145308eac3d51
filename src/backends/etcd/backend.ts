// The etcd backend behind ../../backend/backend.ts: etcd's own mutex (the layout `etcdctl lock`
// uses), over the v3 JSON gateway. The owner token is the lease id in hex, chosen by dlock when it
// grants the lease, so a token names its key (`<prefix><name>/<token>`) in every later process
// (renew, release, a nested run). Each operation is one file of this folder.

import type {
  Backend,
  ForceRelease,
  DoneRead,
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
import { now } from '../../clock.js';
import { UsageError } from '../../errors.js';
import { instanceTimeoutMs, renewTimeoutMs } from '../../timing.js';
import type { EtcdConnection } from './connection.js';
import { GatewayError, type Gateway } from './gateway.js';
import { forceRelease, heldBy, listLocks, readLock } from './inspect.js';
import { holdKey, leaseHexOf, leaseOfOwner, lockPrefix, newLeaseOwner } from './keys.js';
import { keepAlive, ttlSeconds } from './lease.js';
import { readKey } from './line.js';
import type { Kv } from './codec.js';
import { holderOf } from './holders.js';
import { obtain } from './obtain.js';
import { release, type EtcdHold } from './release.js';

export class EtcdBackend implements Backend {
  constructor(
    private readonly connection: EtcdConnection,
    private readonly gateway: Gateway,
    /** The open's lease length; 0 for reads. */
    private readonly ttlMs: number,
  ) {}

  get caps(): Capabilities {
    return this.connection.caps;
  }

  lock(key: string, { mode = { kind: 'exclusive' }, owner = newLeaseOwner(), ttlMs }: LockOptions = {}): LockHandle {
    const lease = ttlMs ?? this.ttlMs;
    // Whole seconds: the least etcd grants; a handle reads the lease it will run on.
    const rounded = lease > 0 ? ttlSeconds(lease) * 1000 : 0;
    const { connectTimeoutMs, prefix } = this.connection;
    // A token that names no lease (another store's, a forged one) is nobody's here: lease "0" matches no key.
    const leaseId = leaseOfOwner(owner) ?? '0';
    const hold: EtcdHold = {
      gateway: this.gateway,
      lockPrefix: lockPrefix(prefix, key),
      holdKey: holdKey(prefix, key, leaseHexOf(leaseId)),
      owner,
      lease: leaseId,
      ttlMs: rounded,
      timeoutMs: rounded > 0 ? instanceTimeoutMs(connectTimeoutMs, rounded, 1) : connectTimeoutMs,
      connectTimeoutMs,
    };
    return new EtcdLock(key, hold, mode, this.caps);
  }

  list(): Promise<LockListing> {
    return listLocks(this.gateway, this.connection.prefix, this.connection.connectTimeoutMs);
  }

  close(): void {
    this.gateway.close();
  }
}

class EtcdLock implements LockHandle {
  constructor(
    readonly key: string,
    private readonly hold: EtcdHold,
    readonly mode: HoldMode,
    readonly caps: Capabilities,
  ) {}

  get owner(): string {
    return this.hold.owner;
  }

  get ttlMs(): number {
    return this.hold.ttlMs;
  }

  obtain(meta: HolderMeta, options: ObtainOptions): Promise<Obtained | NotObtained> {
    return obtain(this.hold, meta, options);
  }

  /**
   * One keepalive, and a read of the key: the hold is the key on our lease, so a key deleted or moved
   * (`etcdctl del`, release --force) is lost now even though the lease lives on.
   */
  async extend({ givesUpAt }: RenewOptions): Promise<Renewal> {
    const startedAt = now();
    const timeoutMs = renewTimeoutMs(this.hold.connectTimeoutMs, givesUpAt - startedAt);
    try {
      const [ttl, own] = await Promise.all([
        keepAlive(this.hold.gateway, this.hold.lease, timeoutMs),
        readKey(this.hold.gateway, this.hold.holdKey, timeoutMs),
      ]);
      if (ttl === undefined || !ours(own, this.hold)) return { kind: 'refused' };
      // A lease renewed for less than it runs on would end before the deadline dlock counts to.
      if (ttl * 1000 < this.hold.ttlMs)
        return { kind: 'failed', errors: [`${this.hold.gateway.label}: renewed for only ${ttl}s`] };
      return { kind: 'extended', startedAt, failures: [], retaken: [] };
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return { kind: 'failed', errors: [`${error.failure.label}: ${error.failure.reason}`] };
    }
  }

  release(options: ReleaseOptions = {}): Promise<MemberRelease[]> {
    return release(this.hold, options);
  }

  read(): Promise<LockRead> {
    return readLock(this.hold);
  }

  async history(): Promise<HistoryRead | undefined> {
    return undefined;
  }

  /** etcd keeps no done mark (caps.oncePer false). */
  async doneMark(): Promise<DoneRead | undefined> {
    return undefined;
  }

  async totals(): Promise<TotalsRead | undefined> {
    return undefined;
  }

  forceRelease(now: boolean): Promise<ForceRelease> {
    return forceRelease(this.hold, now);
  }

  heldBy(nested: Nested): Promise<ParentLease | undefined> {
    return heldBy(this.hold, this.caps, nested);
  }

  async stillHeld(): Promise<boolean> {
    return (await heldBy(this.hold, this.caps)) !== undefined;
  }

  /** dlock renew: one keepalive of the token's lease, while its key is there. */
  async renewByToken(boundMs: number): Promise<TokenRenewal> {
    try {
      const [ttl, own] = await Promise.all([
        keepAlive(this.hold.gateway, this.hold.lease, boundMs),
        readKey(this.hold.gateway, this.hold.holdKey, boundMs),
      ]);
      if (ttl === undefined || !ours(own, this.hold)) return { kind: 'not-ours' };
      return { kind: 'renewed', ttlMs: ttl * 1000 };
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return error.failure.reached
        ? { kind: 'unavailable', failures: [error.failure] }
        : { kind: 'failed', errors: [`${error.failure.label}: ${error.failure.reason}`] };
    }
  }

  async releaseByToken(): Promise<TokenRelease> {
    const releases = await release(this.hold);
    const [only] = releases;
    const outcome = only!.outcome;
    if (outcome.kind === 'failed') {
      const failures = [{ label: only!.label, reason: outcome.reason }];
      return { verdict: 'unavailable', releases, failures };
    }
    const released = outcome.kind === 'released' || outcome.kind === 'released-or-expired';
    return { verdict: released ? 'released' : 'not-ours', releases, failures: [] };
  }

  async syncReplicas(): Promise<void> {
    throw new UsageError(`--sync-replicas is not available on ${this.caps.name}`);
  }
}

/** The owner's key, on the owner's lease and not closed by release --force. */
function ours(own: Kv | undefined, hold: EtcdHold): boolean {
  return (
    own !== undefined &&
    own.lease === hold.lease &&
    own.createRevision === (hold.myRev ?? own.createRevision) &&
    holderOf(own, hold.owner).forcedMs === 0
  );
}
