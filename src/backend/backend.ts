// The seam between dlock and a store: what every backend does, in dlock's words. A backend is
// opened on a connection (open.ts) and gives a handle per key; the handle takes, renews, releases
// and reads that one lock. Nothing here names a store: what one cannot do is said in `caps`
// (capabilities.ts), and its members (Redis instances, etcd endpoints) are labels and failures.
// docs/design.md shows the Redis backend behind it; anchors: etcd's Session + Mutex, redsync's
// Conn, redis-semaphore's abstract lock.

import type { Capabilities } from './capabilities.js';
import type { StoreClock } from './clock.js';
import type { DoctorOptions, DoctorReport } from './doctor.js';
import type { MemberFailure } from './failure.js';
import type { HistoryEvent } from './history.js';
import type { DoneMark, Holder, HolderMeta, HolderProgress, Superseder, Waiter } from './holder.js';
import type { HolderKind, HoldMode } from './mode.js';
import type { Totals } from './totals.js';

/** The backends dlock has: a connection's `store` names the one that opens it (open.ts). */
export type StoreName = 'redis' | 'etcd';

/**
 * A configured store, as the layers above see it: which backend, what it can do, the key prefix,
 * the passwords to mask. Each backend's connection extends it with what only it reads (the Redis
 * backend's targets), built by its own connection.ts and opened by its own entry.
 */
export interface Connection {
  store: StoreName;
  caps: Capabilities;
  prefix: string;
  connectTimeoutMs: number;
  /** The passwords given, for the output to mask. */
  secrets: string[];
}

/**
 * What config gathered for a connection, the same for every backend: each backend's connection.ts
 * builds its `Connection` from it (connection.ts picks the backend by the first URL's scheme).
 */
export interface ConnectionInput {
  /** The store URLs (redis://, rediss://, redis+sentinel://, redis+cluster://, …), as given. */
  urls: string[];
  /** --redis or DLOCK_REDIS_URL: the option named in errors. */
  option: string;
  prefix: string;
  /** --tls-ca, --tls-cert, --tls-key (each backend reads DLOCK_TLS_* from `env` where these are unset). */
  tls: { ca?: string; cert?: string; key?: string };
  env: Record<string, string | undefined>;
}

/** What a backend's entry module gives (open.ts imports it when a command opens the store). */
export interface BackendModule {
  /** Connect within --connect-timeout; 69 when too few members answer for a quorum. */
  open(connection: Connection, options: OpenOptions): Promise<Backend>;
  /** Lock names under the prefix starting with `typed`, from the first member that answers (shell completion). */
  names(connection: Connection, typed: string, timeoutMs: number): { names: Promise<string[]>; close(): void };
  /** dlock doctor: check each member (only where caps.doctor; config refuses the command elsewhere). */
  doctor?(connection: Connection, options: DoctorOptions): Promise<DoctorReport>;
}

export interface OpenOptions {
  /** The lease a hold is taken with (run, acquire, keeper): it sizes each request's timeout; reads leave it out. */
  ttlMs?: number;
}

/** A store opened on its connection: one per command, closed in its `finally`. */
export interface Backend {
  readonly caps: Capabilities;
  /** The lock `key`, held in `mode` (alone), by `owner` (a fresh token), for `ttlMs` (the open's). */
  lock(key: string, options?: LockOptions): LockHandle;
  /** Every lock under the prefix a quorum holds, and each that could not be read (69 when too few members answer). */
  list(): Promise<LockListing>;
  close(): void;
}

export interface LockOptions {
  mode?: HoldMode;
  owner?: string;
  ttlMs?: number;
}

/** One lock, as one owner sees it. */
export interface LockHandle {
  readonly key: string;
  /** The owner token (DLOCK_TOKEN): a nested dlock on the same key runs under it. */
  readonly owner: string;
  /**
   * The lease the hold runs on, which renewals restore and deadlines count from: never less than was
   * asked. A store may apply more (etcd: whole seconds, at least its minimum, ~2 s), and then says so
   * here once `obtain` has it; whoever reads it after obtain reads the lease the store applied.
   */
  readonly ttlMs: number;
  readonly mode: HoldMode;
  readonly caps: Capabilities;
  /** Take the lock, waiting as `options.waitMs` says; the handle remembers the hold for `extend`. */
  obtain(meta: HolderMeta, options: ObtainOptions): Promise<Obtained | NotObtained>;
  /** Renew the hold once (a quorum within validity). */
  extend(options: RenewOptions): Promise<Renewal>;
  /** Owner-checked release on every member; one entry per member released on. */
  release(options?: ReleaseOptions): Promise<MemberRelease[]>;
  /** What a quorum says of the lock: who holds it, every holder and the line where the store sees them. */
  read(): Promise<LockRead>;
  /** The newest `count` history events, newest first; undefined when the backend keeps none (caps.history). */
  history(count: number): Promise<HistoryRead | undefined>;
  /** The key's counts for all time; undefined when the backend keeps none. */
  totals(): Promise<TotalsRead | undefined>;
  /** The --once-per done mark set now (`done` undefined: none); undefined where none is kept (caps.oncePer). */
  doneMark(): Promise<DoneRead | undefined>;
  /** release --force: take the lock from whoever holds it (with `slot`, that holder only). */
  forceRelease(now: boolean, slot?: number): Promise<ForceRelease>;
  /** The hold of this handle's owner when it gives what `mode` asks (a nested dlock); undefined when not held. */
  heldBy(nested: Nested): Promise<ParentLease | undefined>;
  /** Whether this handle's owner still holds the lock (a quorum says so). */
  stillHeld(): Promise<boolean>;
  /** dlock renew: extend the owner's lease by its own recorded TTL, waiting at most `boundMs`. */
  renewByToken(boundMs: number): Promise<TokenRenewal>;
  /** dlock release TOKEN: release the owner's hold, the history recording `exitStatus`. */
  releaseByToken(exitStatus: string): Promise<TokenRelease>;
  /** --sync-replicas (caps.syncReplicas): wait until `replicas` replicas have the hold, or 69. */
  syncReplicas(replicas: number, timeoutMs: number): Promise<void>;
}

/**
 * What the key's options ask of each attempt, beyond the wait: built once by config/ and carried
 * untouched to the backend's attempt (a new per-key option is a field here, read at both ends).
 */
export interface KeyOptions {
  /** --once-per window (caps.oncePer; 0 or none: none): turned away ("done") when a run succeeded within it. */
  oncePerMs?: number;
  /** --priority (caps.priority): higher enters first, arrival order among equals; 0 when not given. */
  priority?: number;
  /** --supersede (caps.supersede): joining, take the place of every older --supersede waiter of the key. */
  supersede?: boolean;
}

export interface ObtainOptions {
  /** undefined: forever; 0: a single attempt. */
  waitMs: number | undefined;
  keyOptions: KeyOptions;
  signal: AbortSignal;
  /**
   * Called each time the lock is found busy and we are about to wait (spinner, verbose log);
   * `place` in line, 1 = next. Failures it returns end the wait as unavailable (a missing grant).
   */
  onWait?: (waitedMs: number, place?: number) => Promise<MemberFailure[] | undefined | void> | void;
  /** A wait rides out an outage: called once when it has lasted --connect-timeout, and once when it is over. */
  onOutage?: (errors: MemberFailure[]) => void;
  onOutageOver?: () => void;
  /** Releases cannot be heard of (a grant missing): waiting polls, within caps.pollCapMs. */
  onPollOnly?: (errors: MemberFailure[]) => void;
}

export type Obtained = {
  kind: 'acquired';
  /** The fencing token: a decimal integer, increasing from holder to holder (may exceed 2^53: compare as BigInt). */
  fence: string;
  slot?: number;
  /** Monotonic ms the lease counts from: sent no later than the request that last set it (a wait's renewals too). */
  startedAt: number;
  waitedMs: number;
  /** The members that did not take part (a quorum did). */
  failures: MemberFailure[];
  /**
   * Variables the store's own tools set for a lock holder, e.g. etcd's ETCD_LOCK_KEY and ETCD_LOCK_REV: given to
   * `run`'s command and printed by `acquire` after dlock's own. Names are environment names, never DLOCK_*
   * (dlock drops those and any other name a shell cannot export).
   */
  env?: Record<string, string>;
};

/** Why the lock was not obtained. */
export type ObtainFailure =
  | { kind: 'busy'; waitedMs: number }
  /** --once-per: a run succeeded within its window. */
  | { kind: 'done'; done: DoneMark; waitedMs: number }
  /** --supersede: a newer --supersede waiter took this one's place in line (`by`: who, as its dlock said). */
  | { kind: 'superseded'; by: Superseder; waitedMs: number }
  | { kind: 'aborted'; waitedMs: number }
  /** The key is in use in another mode or with another n (nothing was taken). */
  | { kind: 'mismatch'; usedAs: HolderKind; slots: number; holders: number; waiters: number; waitedMs: number }
  /**
   * `outageMs`: set when a wait ran out while the store was down (the outage had begun `outageMs` before);
   * `unreadable`: the store answered, but refused to say who holds the lock (a grant missing, a malformed reply).
   */
  | { kind: 'unavailable'; errors: MemberFailure[]; waitedMs: number; outageMs?: number; unreadable?: true };

/** `unreleased`: members where undoing the last attempt failed: a hold whose reply was lost may stay until its TTL. */
export type NotObtained = ObtainFailure & {
  unreleased: Pick<MemberFailure, 'label' | 'reason'>[];
  /** Interrupted, and leaving the line was refused (a grant missing): the place lapses by itself. */
  notLeft?: MemberFailure;
};

export interface RenewOptions {
  /** Monotonic ms at which the lease gives up: no request needs to wait past it. */
  givesUpAt: number;
  /** What the renewal stores about the job for status (--max-hold, the last heartbeat). */
  progress?: HolderProgress;
}

export type Renewal =
  /** `failures`: members that did not renew (a quorum did); `retaken`: members that hold it for us again. */
  | { kind: 'extended'; startedAt: number; failures: MemberFailure[]; retaken: string[] }
  /** A quorum answered that the lock is not ours: it is lost now. */
  | { kind: 'refused' }
  /** Errors or timeouts: retry until the local deadline. */
  | { kind: 'failed'; errors: string[] };

export interface ReleaseOptions {
  /** Record the release in the history (caps.history): how the run ended, and --once-per's done mark after a 0. */
  record?: {
    exitStatus: string;
    reason?: string;
    commandExit?: string;
    oncePerMs: number;
    /** `dlock unhold`: who ends the hold; `forced`: another user's (--force), recorded as a steal (`forced`). */
    by?: { user: string; host: string; forced: boolean };
  };
  /** How long the release may take on one member (default --connect-timeout). */
  boundMs?: number;
  /** false: one attempt per member, a failed one is not retried. */
  retry?: boolean;
  /** The owner's fence, when known: lets the release tell a hold closed by release --force. */
  fence?: string;
}

export type ReleaseOutcome =
  /** Deleted; `notified: false`: the waiters could not be told, they notice by polling (caps.pollCapMs). */
  | { kind: 'released'; notified: boolean }
  /** Not ours on the first answer: it had expired or was taken; `forced`: release --force closed it. */
  | { kind: 'not-ours'; forced?: boolean }
  /** An earlier attempt's reply was lost and a retry found it not ours: released by it, or expired before. */
  | { kind: 'released-or-expired'; reason: string }
  /** Every attempt failed until the bound; `reason` is the first failure. */
  | { kind: 'failed'; reason: string };

export interface MemberRelease {
  label: string;
  outcome: ReleaseOutcome;
}

/** held: one owner has a quorum; free: nobody can have one; unknown: the members that failed could complete one. */
export type Verdict = 'held' | 'free' | 'unknown';

/** Everything a store says of one lock. */
export interface LockState {
  /** The exclusive holder, or the first holder of --slots/--shared. */
  holder: Holder | undefined;
  holders: Holder[];
  mode: HoldMode;
  /** The lock's lease left (ms); negative when it has none. */
  ttlLeftMs: number;
  /** The first waiters, in line order, and how many wait in all. */
  line: Waiter[];
  lineLength: number;
}

/** One member's answer. */
export interface MemberView {
  label: string;
  held: boolean;
  holder?: Holder;
  ttlLeftMs?: number;
  /** Why it did not answer. */
  failure?: MemberFailure;
  /** Its clock at the read: what the ages of its holders and waiters count to. */
  clock?: StoreClock;
}

export interface LockRead {
  verdict: Verdict;
  /** The view of the member whose holder a quorum agrees on. */
  agreed?: MemberView;
  /** Every holder, the mode and the line, where the store sees the whole lock (caps.line). */
  state?: LockState;
  /** Each member's view, in the order they were configured. */
  members: MemberView[];
  /** A clock from the read (undefined when nobody answered). */
  clock?: StoreClock;
}

/** A lock a quorum holds: its (first) holder, its TTL left; where the store sees it whole, every holder, the line. */
export interface ListedLock {
  key: string;
  holder: Holder;
  ttlMs: number;
  all?: Holder[];
  waiting?: number;
  clock?: StoreClock;
}

/** A lock that could not be read, and why. */
export interface UnreadableLock {
  key: string;
  error: string;
}

export interface LockListing {
  /** Every lock name found, in order. */
  keys: string[];
  held: ListedLock[];
  unreadable: UnreadableLock[];
}

export type HistoryRead = { events: HistoryEvent[] } | { failure: MemberFailure };
export type TotalsRead = { totals: Totals } | { failure: MemberFailure };
export type DoneRead = { done: DoneMark | undefined } | { failure: MemberFailure };

/**
 * A holder release --force removed, how long its key stays closed, and the store's clock at the removal
 * (undefined where the store has none: etcd's replies carry no time).
 */
export type RemovedHolder = Holder & { closedForMs: number; clock?: StoreClock };

export interface ForceRelease {
  removed: RemovedHolder[];
  failed: MemberFailure[];
}

/** The nested call: its key and command (for the refusal), and the DLOCK_SLOT it inherited. */
export interface Nested {
  key: string;
  command: 'run' | 'acquire';
  slot: string | undefined;
}

/** The parent's hold as the store records it: what a nested run renews. */
export interface ParentLease {
  mode: HoldMode;
  /** The lease length the parent took it with; undefined when no member says. */
  ttlMs: number | undefined;
  fence: string;
}

export interface TokenRelease {
  verdict: 'released' | 'unavailable' | 'not-ours';
  releases: MemberRelease[];
  /** The members that failed to answer, unreachable ones included. */
  failures: Pick<MemberFailure, 'label' | 'reason'>[];
}

export type TokenRenewal =
  | { kind: 'renewed'; ttlMs: number }
  | { kind: 'not-ours' }
  /** Too few members answered to tell whose the lock is. */
  | { kind: 'unavailable'; failures: MemberFailure[] }
  | { kind: 'failed'; errors: string[] };
