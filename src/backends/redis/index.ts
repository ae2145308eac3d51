// The lock engine's face: the only module of lockset/ that commands/, hold/, keeper/, child/ and
// views/ import, and through which they see nothing of lock/ or redis/ but the neutral types
// re-exported here (.dependency-cruiser.cjs keeps it so). One Redis or a Redlock quorum is chosen
// once, when the set is opened (strategy.ts); nothing above asks which.

// The vocabulary: holders, waiters, what a read says, what a hold records.
export type { HistoryEntry } from './lock/history.js';
export {
  pidNumber,
  type DoneMark,
  type Holder,
  type HolderMeta,
  type HolderProgress,
  type Waiter,
} from '../../backend/holder.js';
export type { LockState } from './lock/inspect.js';
export { lockKeys, type LockKeys } from './lock/keys.js';
export { HISTORY_MAX } from '../../backend/history.js';
export {
  EXIT_CLASSES,
  LOSS_REASONS,
  TURNED_AWAY_REASONS,
  type ExitClass,
  type LossReason,
  type Observed,
  type Totals,
  type TurnedAwayReason,
} from '../../backend/totals.js';
export { PLACE_LEASE_MS } from './lock/line.js';
export { MODES, slotsOf, type HolderKind, type HoldMode } from '../../backend/mode.js';
export type { HeldLock } from './lock/retake.js';
export { failureText, instanceFailure, retryableFailure, type MemberFailure } from './client/client.js';

// Opening and closing a set, and what its backend can do.
export type { Capabilities } from '../../backend/capabilities.js';
export { close, type LockSet } from './lockset.js';
export { newOwnerToken, openLockSet, unavailable, unreadable } from './open.js';
export { quorumSize, tally } from './quorum.js';
export { strategyOf } from './strategy.js';

// Holding: take, renew, release.
export { extendAll, type Renewal } from './extend.js';
export { obtain, type NotObtained, type Obtained } from './obtain.js';
export { RedundancyWatch, type RedundancyChange } from './redundancy.js';
export { releaseAll, releaseFailures, type InstanceRelease } from './release.js';
export { syncReplicas } from './sync-replicas.js';
export { POLL_CAP_MS } from './waiter.js';

// Reading across the instances.
export { forceReleaseAll, type RemovedHolder } from './force-release.js';
export { historyOf, historyOfKey, recentHistory, totalsOfKey } from './history.js';
export {
  holderSnapshot,
  inspectAll,
  majority,
  type HolderSnapshot,
  type InstanceView,
  type Verdict,
} from './inspect.js';
export { listLocks, type ListedLock, type UnreadableLock } from './list.js';
export { lookForNames } from './names.js';
export { serverNow, type ServerClock } from '../../backend/clock.js';
export { isHeldBy, isStillHeldBy, type Nested, type ParentLease } from './nested.js';

// Renew and release by the owner token alone (dlock renew, dlock release).
export { releaseByToken, renewByToken } from './by-token.js';
