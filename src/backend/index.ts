// The face of the lock engines: the only module of src/backend/ that config/, cli/, commands/,
// hold/, keeper/, child/, views/, metrics/, monitor/ and bounds/ import (.dependency-cruiser.cjs
// keeps it so). Everything here is the store's neutral vocabulary; which store a connection
// reaches is chosen once, when it is opened (open.ts), and nothing above asks which.

// Operations: a backend per connection, a handle per key (backend.ts).
export type {
  Backend,
  DoneRead,
  ForceRelease,
  HistoryRead,
  KeyOptions,
  ListedLock,
  LockHandle,
  LockListing,
  LockRead,
  LockState,
  MemberRelease,
  MemberView,
  Nested,
  NotObtained,
  Obtained,
  ParentLease,
  ReleaseOutcome,
  RemovedHolder,
  Renewal,
  TokenRenewal,
  TotalsRead,
  UnreadableLock,
  Verdict,
} from './backend.js';
export { connectionOf, splitStoreUrls, type Connection, type ConnectionInput } from './connection.js';
export { backendModule, openBackend } from './open.js';
export { refusal, type Capabilities, type Refusable } from './capabilities.js';
export type { DoctorCheck, DoctorReport, DoctorStatus } from './doctor.js';
export { newOwnerToken } from './owner.js';

// The vocabulary: holder kinds, holders and waiters, failures, clocks, history, counts.
export { KINDS, MODES, slotsOf, type HolderKind, type HoldMode } from './mode.js';
export {
  isClosed,
  MAX_SLOTS,
  parsePriority,
  REASON_MAX,
  pidNumber,
  PRIORITY_MAX,
  type DoneMark,
  type Superseder,
  type Holder,
  type HolderMeta,
  type HolderProgress,
  type Waiter,
} from './holder.js';
export { failureLine, failureText, retryableFailure, unavailable, unreadable, type MemberFailure } from './failure.js';
export { clockAt, storeNow, type StoreClock } from './clock.js';
export {
  eventName,
  HISTORY_MAX,
  isUnreadable,
  known,
  type AcquiredEvent,
  type BusyEvent,
  type DoneEvent,
  type Field,
  type ForcedEvent,
  type HistoryEvent,
  type LeftEvent,
  type LostEvent,
  type OtherEvent,
  type ReleasedEvent,
  type StopReason,
  type Unreadable,
} from './history.js';
export {
  EXIT_CLASSES,
  LOSS_REASONS,
  TURNED_AWAY_REASONS,
  type ExitClass,
  type LossReason,
  type Observed,
  type Totals,
  type TurnedAwayReason,
} from './totals.js';
export { RedundancyWatch, type RedundancyChange } from './redundancy.js';
