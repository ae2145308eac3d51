// dlock status [key]: who holds a lock (exit 0 held, 1 free), or every held lock under the prefix.
// With several instances a lock is held only when one owner holds a majority of them; when the
// instances that did not answer could complete such a majority, status cannot tell (69).

import type { ConnectionConfig } from '../config/index.js';
import { formatDuration } from '../duration.js';
import { UnavailableError } from '../errors.js';
import type { Holder } from '../lock/holder.js';
import { keyFromLockName, lockKeys, lockPattern } from '../lock/keys.js';
import { parseScanReply } from '../lock/replies.js';
import { AnsweredError, disconnectAll, failureText, instanceFailure, type Instance } from '../redis/client.js';
import { masterNodes } from '../redis/nodes.js';
import type { LockSet } from '../lockset/lockset.js';
import { openLockSet, unavailable } from '../lockset/open.js';
import { quorumSize } from '../lockset/quorum.js';
import { stdout, type Output } from '../output.js';
import { now, TimeoutError, withTimeout } from '../clock.js';
import { cut, printable, toJson } from '../untrusted.js';
import { deadPidText } from '../views/dead-pid.js';
import {
  inspectAll,
  majority,
  publicHolder,
  publicView,
  publicWaiter,
  type InstanceView,
  type Verdict,
} from '../views/instance-views.js';
import type { LockState } from '../lock/inspect.js';

export interface StatusOptions {
  json: boolean;
}

/** The report goes to `out` (stdout); errors and warnings are thrown or logged to stderr. */
export async function status(
  config: ConnectionConfig,
  key: string | undefined,
  options: StatusOptions,
  out: Output = stdout,
): Promise<number> {
  const set = await openLockSet(config, key ?? '');
  try {
    return key === undefined
      ? await listHeld(set, config, options, out)
      : await showKey(set, config, key, options, out);
  } finally {
    disconnectAll(set.instances);
  }
}

async function showKey(
  set: LockSet,
  config: ConnectionConfig,
  key: string,
  options: StatusOptions,
  out: Output,
): Promise<number> {
  const views = await inspectAll(
    set,
    set.keys,
    config.targets.map((target) => target.label),
  );
  const { verdict, agreed } = majority(views, set.total);
  const failures = views.flatMap((v) => (v.failure ? [v.failure] : []));
  if (verdict === 'unknown' && set.total === 1) throw unavailable(1, failures);
  // One instance: every holder (--slots/--shared) and the line; Redlock: the majority's holder.
  const state = set.total === 1 ? views[0]?.state : undefined;
  const holders = state ? state.holders : agreed?.holder ? [agreed.holder] : [];
  if (options.json) {
    const held = verdict === 'unknown' ? null : verdict === 'held';
    const mode = state?.mode ?? { kind: 'exclusive' };
    out.write(
      `${toJson({
        key,
        held,
        holder: agreed ? publicHolder(agreed.holder!, agreed.ttl_ms) : null,
        mode: mode.kind,
        ...(mode.kind === 'slots' ? { slots: mode.slots } : {}),
        holders: holders.map((holder) => publicHolder(holder, holder.ttlLeftMs ?? agreed?.ttl_ms)),
        line: (state?.line ?? []).map((waiter, i) => publicWaiter(waiter, i + 1)),
        waiting: state?.lineLength ?? 0,
        quorum: quorumSize(set.total),
        instances: views.map(publicView),
      })}\n`,
    );
  } else {
    if (state && state.mode.kind !== 'exclusive' && holders.length > 0) out.write(describeHolders(key, state));
    else out.write(agreed ? describe(key, agreed.holder!, agreed.ttl_ms ?? -1) : `${key}: ${verdict}\n`);
    if (state && state.lineLength > 0) out.write(describeLine(state));
    if (set.total > 1) out.write(describeInstances(views, set.total, verdict));
  }
  if (verdict === 'unknown') {
    throw new UnavailableError(
      `cannot tell whether a majority holds ${key}: ${failures.length} of ${set.total} instances did not answer ` +
        `(${failures.map(failureText).join('; ')})`,
    );
  }
  return verdict === 'held' ? 0 : 1;
}

/** The holder as status shows it; every field from the hash is escaped (it may be forged). */
export function describe(key: string, holder: Holder, pttlMs: number, nowMs: number = Date.now()): string {
  const since =
    holder.sinceMs === undefined
      ? 'unknown'
      : `${new Date(holder.sinceMs).toISOString()} (${formatDuration(nowMs - holder.sinceMs)} ago)`;
  const lines = [
    `${printable(key)}: ${holder.owner === '' ? 'closed by release --force until this lease runs out' : 'held'}`,
    `  host     ${printable(holder.host)}`,
    `  pid      ${printable(holder.pid)}${pidNote(holder, pttlMs)}`,
    `  command  ${printable(holder.cmd)}`,
    `  since    ${since}`,
    `  ttl left ${pttlMs >= 0 ? formatDuration(pttlMs) : 'none'} of ` +
      `${holder.ttlMs === undefined ? 'unknown' : formatDuration(holder.ttlMs)}`,
    `  fence    ${printable(holder.fence)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Every holder of --slots/--shared, one row each; fields escaped (they may be forged). */
export function describeHolders(key: string, state: LockState, nowMs: number = Date.now()): string {
  const { mode, holders } = state;
  const title =
    mode.kind === 'slots'
      ? `${printable(key)}: held, ${holders.length} of ${mode.slots} slots taken (--slots ${mode.slots})`
      : `${printable(key)}: held by ${holders.length} shared holder${holders.length === 1 ? '' : 's'} (--shared)`;
  const cells = [
    [mode.kind === 'slots' ? 'SLOT' : 'MODE', 'HOST', 'PID', 'FOR', 'TTL LEFT', 'FENCE', 'COMMAND'],
  ].concat(
    holders.map((holder) => [
      holder.slot !== undefined ? String(holder.slot) : 'shared',
      printable(holder.host),
      `${printable(holder.pid)}${deadPidText(holder, holder.ttlLeftMs ?? -1) ? ' (not running)' : ''}`,
      holder.sinceMs === undefined ? 'unknown' : formatDuration(nowMs - holder.sinceMs),
      holder.ttlLeftMs === undefined
        ? 'unknown'
        : `${formatDuration(holder.ttlLeftMs)}${holder.owner === '' ? ' (closed by release --force)' : ''}`,
      printable(holder.fence),
      printable(holder.cmd),
    ]),
  );
  return `${title}\n${indent(columns(cells))}`;
}

/** The line, in order: place, mode, host, pid, how long each has waited. */
export function describeLine(state: LockState): string {
  const cells = [['PLACE', 'MODE', 'HOST', 'PID', 'WAITED', 'COMMAND']].concat(
    state.line.map((waiter, i) => [
      String(i + 1),
      waiter.mode === 'slots' ? 'slot' : waiter.mode,
      printable(waiter.host),
      printable(waiter.pid),
      waiter.waitedMs === undefined ? 'unknown' : formatDuration(waiter.waitedMs),
      printable(waiter.cmd),
    ]),
  );
  const more = state.lineLength > state.line.length ? `  … and ${state.lineLength - state.line.length} more\n` : '';
  return `line: ${state.lineLength} waiting\n${indent(columns(cells))}${more}`;
}

function indent(text: string): string {
  return text.replace(/^(?=.)/gm, '  ');
}

/** " (pid N is not running on this host: ...)" for a dead holder on this host, else "". */
function pidNote(holder: Holder, pttlMs: number): string {
  const dead = deadPidText(holder, pttlMs);
  return dead ? ` (${dead})` : '';
}

function describeInstances(views: InstanceView[], total: number, verdict: Verdict): string {
  const state = (v: InstanceView): string => {
    if (v.error) return `error: ${printable(v.error)}`;
    if (!v.holder) return 'free';
    return `held by ${printable(v.holder.host)} pid ${printable(v.holder.pid)} (fence ${printable(v.holder.fence)})`;
  };
  const lines = views.map((v) => `  ${v.redis}  ${state(v)}`);
  const summary =
    verdict === 'held' ? 'a majority agrees' : verdict === 'free' ? 'no majority holds it' : 'too few answered to tell';
  return `instances (${quorumSize(total)} of ${total} needed; ${summary}):\n${lines.join('\n')}\n`;
}

/**
 * Every lock under the prefix that a majority holds, found with SCAN (never KEYS) on each
 * instance (on a Cluster, on each of its masters). A lock held by a majority is on at least
 * one instance that answered, unless a quorum of instances failed: then the list could miss
 * one (69).
 */
async function listHeld(set: LockSet, config: ConnectionConfig, options: StatusOptions, out: Output): Promise<number> {
  const scans = await Promise.allSettled(set.instances.map((instance) => scanLocks(instance, config)));
  const failures = [
    ...scans.flatMap((s, i) =>
      s.status === 'rejected' ? [failureText(instanceFailure(set.instances[i].target.label, s.reason))] : [],
    ),
    ...set.unreachable.map(failureText),
  ];
  if (failures.length >= quorumSize(set.total)) {
    throw new UnavailableError(
      `cannot list locks: ${failures.length} of ${set.total} instances did not answer (${failures.join('; ')})`,
    );
  }
  const names = new Set(scans.flatMap((s) => (s.status === 'fulfilled' ? s.value : [])));
  const keys = [...names]
    .flatMap((name) => keyFromLockName(config.prefix, name) ?? [])
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const order = config.targets.map((target) => target.label);
  const rows: [string, { holder: Holder; ttlMs: number; all?: Holder[]; waiting?: number }][] = [];
  // A lock that could not be read is listed as such, never left out (exit 69 after the list).
  const unreadable: { key: string; error: string }[] = [];
  for (const key of keys) {
    const views = await inspectAll(set, lockKeys(config.prefix, key), order);
    const { verdict, agreed } = majority(views, set.total);
    const state = set.total === 1 ? views[0]?.state : undefined;
    if (agreed)
      rows.push([
        key,
        {
          holder: agreed.holder!,
          ttlMs: agreed.ttl_ms ?? -1,
          ...(state ? { all: state.holders, waiting: state.lineLength } : {}),
        },
      ]);
    else if (verdict === 'unknown')
      unreadable.push({
        key,
        error: views.flatMap((v) => (v.error ? [set.total > 1 ? `${v.redis}: ${v.error}` : v.error] : [])).join('; '),
      });
  }
  // A name SCAN found can be anything (a forged hash): it is cut for showing, looked up whole.
  if (options.json) {
    const entries = [
      ...rows.map(([key, { holder, ttlMs, all, waiting }]) => ({
        key: cut(key),
        ...publicHolder(holder, ttlMs),
        ...(all && all.length > 1 ? { holders: all.map((h) => publicHolder(h, h.ttlLeftMs ?? ttlMs)) } : {}),
        ...(waiting ? { waiting } : {}),
      })),
      ...unreadable.map(({ key, error }) => ({ key: cut(key), error })),
    ];
    out.write(`${toJson(entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)))}\n`);
  } else if (rows.length === 0 && unreadable.length === 0) {
    out.write(`no locks held under ${config.prefix}\n`);
  } else {
    // A --slots/--shared lock: one row per holder, its slot (or "shared") after the key.
    const perHolder = rows.flatMap(([key, { holder, ttlMs, all }]) =>
      all && all.length > 0 && (all[0].slot !== undefined || all[0].shared)
        ? all.map((h) => ({
            key,
            holder: h,
            ttlMs: h.ttlLeftMs ?? ttlMs,
            tag: h.slot !== undefined ? `slot ${h.slot}` : 'shared',
          }))
        : [{ key, holder, ttlMs }],
    );
    const shown = rows.length > 0 ? table(perHolder) : '';
    out.write(shown);
    const width = Math.max(
      3,
      ...shown
        .split('\n')
        .map((line) => line.indexOf('  '))
        .filter((i) => i > 0),
    );
    for (const { key, error } of unreadable)
      out.write(`${printable(cut(key)).padEnd(width)}  unreadable: ${printable(error)}\n`);
  }
  if (unreadable.length > 0) {
    const which = unreadable.map(({ key, error }) => `${cut(key)}: ${error}`).join('; ');
    throw new UnavailableError(
      `could not read ${unreadable.length} of the ${keys.length} locks under ${config.prefix} (${which})`,
    );
  }
  return rows.length > 0 ? 0 : 1;
}

/** The list of held locks as a table; every key name and field is cut and escaped (they may be forged). */
export function table(
  rows: { key: string; holder: Holder; ttlMs: number; tag?: string }[],
  nowMs: number = Date.now(),
): string {
  const cells = [['KEY', 'HOST', 'PID', 'FOR', 'TTL LEFT', 'FENCE', 'COMMAND']].concat(
    rows.map(({ key, holder, ttlMs, tag }) => [
      `${printable(cut(key))}${tag ? ` (${tag})` : ''}`,
      printable(holder.host),
      `${printable(holder.pid)}${deadPidText(holder, undefined) ? ' (not running)' : ''}`,
      holder.sinceMs === undefined ? 'unknown' : formatDuration(nowMs - holder.sinceMs),
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

/**
 * Every lock hash name on one instance. The whole listing gets --connect-timeout: a server
 * whose cursor never comes back to 0 (or that answers garbage) fails the instance, never hangs.
 */
async function scanLocks(instance: Instance, config: ConnectionConfig): Promise<string[]> {
  const names: string[] = [];
  const deadline = now() + config.connectTimeoutMs;
  let pages = 0;
  const unfinished = () =>
    new AnsweredError(
      `SCAN did not finish within --connect-timeout (${formatDuration(config.connectTimeoutMs)}; a larger one ` +
        'lists more keys)',
    );
  for (const node of masterNodes(instance.client)) {
    let cursor = '0';
    do {
      const left = Math.floor(deadline - now());
      if (left <= 0) throw unfinished();
      const scan = node.scan(cursor, 'MATCH', lockPattern(config.prefix), 'COUNT', 500, 'TYPE', 'hash');
      // A first SCAN that hangs is a hung server ("timed out"); a later one, a listing too long.
      const reply = await withTimeout(scan, left).catch((error: unknown) => {
        throw error instanceof TimeoutError && pages > 0 ? unfinished() : error;
      });
      const page = parseScanReply(reply);
      pages++;
      cursor = page.cursor;
      names.push(...page.names);
    } while (cursor !== '0');
  }
  return names;
}
