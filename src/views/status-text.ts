// What dlock status prints: one lock's holder(s), its line and each instance's view, or the table
// of every held lock. Every key name and holder field is cut and escaped here (they may be forged).

import { now } from '../clock.js';
import { formatDuration } from '../duration.js';
import {
  type Capabilities,
  type Holder,
  isClosed,
  type ListedLock,
  type LockRead,
  type LockState,
  type MemberView,
  MODES,
  type StoreClock,
  storeNow,
  slotsOf,
  type UnreadableLock,
} from '../backend/index.js';
import { cut, printable, toJson } from '../untrusted.js';
import { pidCell, pidShown, processText } from './dead-pid.js';
import { publicHolder, publicView, publicWaiter } from './instance-views.js';
import { untilPart } from './hold-text.js';

/**
 * The holder as status shows it; every field from the hash is escaped (it may be forged). `nowMs`:
 * the server's time, which the hash's times were stamped on (status passes the read's).
 */
export function describe(key: string, holder: Holder, pttlMs: number, nowMs: number = Date.now()): string {
  const since =
    holder.sinceMs === undefined
      ? 'unknown'
      : `${new Date(holder.sinceMs).toISOString()} (${formatDuration(nowMs - holder.sinceMs)} ago)`;
  const title = isClosed(holder)
    ? 'closed by release --force until this lease runs out'
    : holder.hold
      ? 'held by a hold (dlock hold): no process holds it'
      : 'held';
  const lines = [
    `${printable(key)}: ${title}`,
    `  host     ${printable(holder.host)}`,
    `  pid      ${pidShown(holder)}${pidNote(holder, pttlMs)}`,
    `  command  ${printable(holder.cmd)}`,
    `  since    ${since}`,
    holder.hold && holder.untilMs === undefined
      ? `  ttl left none: until dlock unhold`
      : `  ttl left ${pttlMs >= 0 ? formatDuration(pttlMs) : 'none'} of ` +
        `${holder.ttlMs === undefined ? 'unknown' : formatDuration(holder.ttlMs)}`,
    `  fence    ${printable(holder.fence)}`,
    ...purposeLines(holder, nowMs),
    ...boundLines(holder, nowMs),
  ];
  return `${lines.join('\n')}\n`;
}

/** A hold's end, the --reason and who took it, when stored (escaped: they may be forged). */
function purposeLines(holder: Holder, nowMs: number): string[] {
  const lines: string[] = [];
  if (holder.hold && holder.untilMs !== undefined)
    lines.push(`  until    ${new Date(holder.untilMs).toISOString()} (${untilPart(holder.untilMs, nowMs)})`);
  if (holder.reason !== undefined) lines.push(`  reason   '${printable(holder.reason)}'`);
  if (holder.user !== undefined && (holder.hold || holder.reason !== undefined))
    lines.push(`  user     ${printable(holder.user)}`);
  return lines;
}

/**
 * --max-hold and the last heartbeat, when the holder's renewals stored them (numbers read
 * strictly: a forged one is not shown). "held 1h12m of --max-hold 2h".
 */
function boundLines(holder: Holder, nowMs: number): string[] {
  const lines: string[] = [];
  if (holder.maxHoldMs !== undefined) {
    const held = holder.sinceMs === undefined ? 'unknown' : formatDuration(Math.max(0, nowMs - holder.sinceMs));
    lines.push(`  bound    held ${held} of --max-hold ${formatDuration(holder.maxHoldMs)}`);
  }
  if (holder.beatMs !== undefined)
    lines.push(`  beat     last heartbeat ${formatDuration(Math.max(0, nowMs - holder.beatMs))} ago`);
  return lines;
}

/** Every holder of --slots/--shared, one row each; fields escaped (they may be forged). */
export function describeHolders(key: string, state: LockState, nowMs: number = Date.now()): string {
  const { mode, holders } = state;
  const kind = MODES[mode.kind];
  // Closed by release --force: no holder of any kind enters until the last closed lease ends.
  const closedMs = Math.max(-1, ...holders.filter(isClosed).map((h) => h.ttlLeftMs ?? -1));
  const closed = closedMs >= 0 ? `; closed to new holders by release --force for ${formatDuration(closedMs)} more` : '';
  const title = `${printable(key)}: ${kind.heldBy(slotsOf(mode), holders.length)}${closed}`;
  const cells = [[kind.slotted ? 'SLOT' : 'MODE', 'HOST', 'PID', 'FOR', 'TTL LEFT', 'FENCE', 'COMMAND']].concat(
    holders.map((holder) => [
      // A holder of --slots whose forged details hold no slot reads "shared".
      MODES[holder.kind].holderCell(holder.slot) ?? 'shared',
      printable(holder.host),
      pidCell(holder),
      holder.sinceMs === undefined ? 'unknown' : formatDuration(nowMs - holder.sinceMs),
      holder.ttlLeftMs === undefined
        ? 'unknown'
        : `${formatDuration(holder.ttlLeftMs)}${isClosed(holder) ? ' (closed by release --force)' : ''}`,
      printable(holder.fence),
      printable(holder.cmd),
    ]),
  );
  return `${title}\n${indent(columns(cells))}`;
}

/**
 * The line, in order: place, mode, host, pid, how long each has waited; each one's --priority when any has one
 * other than 0, and whether it asked for --supersede when any did.
 */
export function describeLine(state: LockState): string {
  const priorities = state.line.some(({ priority }) => priority !== 0);
  const superseding = state.line.some(({ supersede }) => supersede);
  // A REASON column when a waiter gave one (a hold always does).
  const why = state.line.some((waiter) => waiter.reason !== undefined);
  const cells = [
    [
      'PLACE',
      'MODE',
      ...(priorities ? ['PRIORITY'] : []),
      ...(superseding ? ['SUPERSEDE'] : []),
      'HOST',
      'PID',
      'WAITED',
      'COMMAND',
      ...(why ? ['REASON'] : []),
    ],
  ].concat(
    state.line.map((waiter, i) => [
      String(i + 1),
      MODES[waiter.mode].waiterName,
      ...(priorities ? [String(waiter.priority)] : []),
      ...(superseding ? [waiter.supersede ? 'yes' : 'no'] : []),
      printable(waiter.host),
      waiter.hold ? 'none (hold)' : printable(waiter.pid),
      waiter.waitedMs === undefined ? 'unknown' : formatDuration(waiter.waitedMs),
      printable(waiter.cmd),
      ...(why ? [waiter.reason === undefined ? '' : `'${printable(waiter.reason)}'`] : []),
    ]),
  );
  const more = state.lineLength > state.line.length ? `  … and ${state.lineLength - state.line.length} more\n` : '';
  return `line: ${state.lineLength} waiting\n${indent(columns(cells))}${more}`;
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '  ');
}

/** " (pid N is not running on this host: ...)" for a dead holder here, " (held across steps ...)" for --no-keeper. */
function pidNote(holder: Holder, pttlMs: number): string {
  const note = processText(holder, pttlMs);
  return note ? ` (${note})` : '';
}

/** What each member says (a quorum of independent members), and whether a majority agrees. */
export function describeInstances({ members, verdict }: LockRead, caps: Capabilities): string {
  const state = (v: MemberView): string => {
    if (v.failure) return `error: ${printable(v.failure.reason)}`;
    if (!v.holder) return 'free';
    return `held by ${printable(v.holder.host)} pid ${pidShown(v.holder)} (fence ${printable(v.holder.fence)})`;
  };
  const lines = members.map((v) => `  ${v.label}  ${state(v)}`);
  const summary =
    verdict === 'held' ? 'a majority agrees' : verdict === 'free' ? 'no majority holds it' : 'too few answered to tell';
  return `instances (${caps.quorum} of ${caps.total} needed; ${summary}):\n${lines.join('\n')}\n`;
}

/** One lock as status --json shows it: the majority's holder, every holder and the line (one Redis), each member. */
export function keyJson(key: string, read: LockRead, caps: Capabilities): string {
  return `${toJson(keyObject(key, read, caps))}\n`;
}

/** keyJson's object, before it is serialised (the board serves it inside its own answer). */
export function keyObject(key: string, { members, verdict, agreed, state }: LockRead, caps: Capabilities) {
  // The mode's kind, and its number when it has one (--slots n: "slots": n).
  const { kind, ...modeNumber } = state?.mode ?? { kind: 'exclusive' };
  const holders = state ? state.holders : agreed?.holder ? [agreed.holder] : [];
  // A hold closed by release --force (owner "") is nobody's: held means someone else holds it,
  // as dlock_lock_held says; closed that the key admits nobody until the closed lease ends.
  const closed = holders.some(isClosed);
  const someone = holders.some((holder) => !isClosed(holder));
  const held = verdict === 'unknown' ? null : verdict === 'held' && someone;
  return {
    key,
    held,
    ...(closed ? { closed: true } : {}),
    holder: agreed ? publicHolder(agreed.holder!, agreed.ttlLeftMs) : null,
    mode: kind,
    ...modeNumber,
    holders: holders.map((holder) => publicHolder(holder, holder.ttlLeftMs ?? agreed?.ttlLeftMs)),
    line: (state?.line ?? []).map((waiter, i) => publicWaiter(waiter, i + 1)),
    waiting: state?.lineLength ?? 0,
    quorum: caps.quorum,
    instances: members.map((member) => publicView(member, caps)),
  };
}

/** The held locks and the unreadable ones as one JSON array, sorted by key (names cut for showing). */
export function listJson(held: ListedLock[], unreadable: UnreadableLock[]): string {
  return `${toJson(listObjects(held, unreadable))}\n`;
}

/** listJson's array, before it is serialised. */
export function listObjects(held: ListedLock[], unreadable: UnreadableLock[]) {
  const entries = [
    ...held.map(({ key, holder, ttlMs, all, waiting }) => ({
      key: cut(key),
      ...publicHolder(holder, ttlMs),
      ...(all && all.length > 1 ? { holders: all.map((h) => publicHolder(h, h.ttlLeftMs ?? ttlMs)) } : {}),
      ...(waiting ? { waiting } : {}),
    })),
    ...unreadable.map(({ key, error }) => ({ key: cut(key), error })),
  ];
  return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The held locks as a table (a --slots/--shared lock: one row per holder), then each unreadable one.
 * A hold closed by release --force is tagged so: nobody holds it, the key is closed until its lease ends.
 */
export function listText(held: ListedLock[], unreadable: UnreadableLock[]): string {
  const closed = (holder: Holder, tag?: string) =>
    isClosed(holder) ? [tag, CLOSED_TAG].filter(Boolean).join(', ') : tag;
  const perHolder = held.flatMap(({ key, holder, ttlMs, all, clock }) =>
    all && all.length > 0 && MODES[all[0].kind].holderTag(all[0].slot) !== undefined
      ? all.map((h) => ({
          key,
          clock,
          holder: h,
          ttlMs: h.ttlLeftMs ?? ttlMs,
          // A holder of --slots whose forged details hold no slot reads "shared".
          tag: closed(h, MODES[h.kind].holderTag(h.slot) ?? 'shared'),
        }))
      : [{ key, holder, ttlMs, clock, tag: closed(holder) }],
  );
  const shown = held.length > 0 ? table(perHolder) : '';
  const width = Math.max(
    3,
    ...shown
      .split('\n')
      .map((line) => line.indexOf('  '))
      .filter((i) => i > 0),
  );
  const failed = unreadable.map(
    ({ key, error }) => `${printable(cut(key)).padEnd(width)}  unreadable: ${printable(error)}\n`,
  );
  return shown + failed.join('');
}

/** What the list says of a hold closed by release --force (status KEY says how long it stays closed). */
const CLOSED_TAG = 'closed by release --force';

/** The list of held locks as a table; every key name and field is cut and escaped (they may be forged). */
export function table(
  rows: { key: string; holder: Holder; ttlMs: number; tag?: string; clock?: StoreClock }[],
  at: number = now(),
): string {
  const cells = [['KEY', 'HOST', 'PID', 'FOR', 'TTL LEFT', 'FENCE', 'COMMAND']].concat(
    rows.map(({ key, holder, ttlMs, tag, clock }) => [
      `${printable(cut(key))}${tag ? ` (${tag})` : ''}`,
      printable(holder.host),
      pidCell(holder),
      holder.sinceMs === undefined ? 'unknown' : formatDuration(storeNow(clock, at) - holder.sinceMs),
      ttlMs >= 0 ? formatDuration(ttlMs) : 'none',
      printable(holder.fence),
      printable(holder.cmd),
    ]),
  );
  return columns(cells);
}

/** Rows of cells as aligned columns (the last one unpadded). */
function columns(cells: string[][]): string {
  const widths = cells[0].map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  return (
    cells
      .map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]))).join('  '))
      .join('\n') + '\n'
  );
}

/** Locks named in the one error line about unreadable locks; the rest are counted (the list shows each). */
const UNREADABLE_NAMED = 5;

/**
 * "k1: why; k2: why; … and N more" for the error line after a listing: the first few by name,
 * each cut, so that thousands of unreadable (forged) locks still make one short line.
 */
export function unreadableSummary(unreadable: UnreadableLock[]): string {
  const named = unreadable.slice(0, UNREADABLE_NAMED).map(({ key, error }) => `${cut(key)}: ${cut(error, 1024)}`);
  const more = unreadable.length - named.length;
  return named.join('; ') + (more > 0 ? `; and ${more} more` : '');
}
