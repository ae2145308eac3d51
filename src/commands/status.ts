// dlock status [key]: who holds a lock (exit 0 held, 1 free), or every held lock under the prefix.
// With several instances a lock is held only when one owner holds a majority of them; when the
// instances that did not answer could complete such a majority, status cannot tell (69).

import type { ConnectionConfig } from '../config.js';
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
import { now, TimeoutError, withTimeout } from '../timeout.js';
import { cut, printable, toJson } from '../untrusted.js';
import { deadPidText } from '../views/dead-pid.js';
import { inspectAll, majority, publicHolder, publicView, type InstanceView, type Verdict } from '../views/instance-views.js';

export interface StatusOptions {
  json: boolean;
}

/** The report goes to `out` (stdout); errors and warnings are thrown or logged to stderr. */
export async function status(config: ConnectionConfig, key: string | undefined, options: StatusOptions, out: Output = stdout): Promise<number> {
  const set = await openLockSet(config, key ?? '');
  try {
    return key === undefined ? await listHeld(set, config, options, out) : await showKey(set, config, key, options, out);
  } finally {
    disconnectAll(set.instances);
  }
}

async function showKey(set: LockSet, config: ConnectionConfig, key: string, options: StatusOptions, out: Output): Promise<number> {
  const views = await inspectAll(set, set.keys, config.targets.map((target) => target.label));
  const { verdict, agreed } = majority(views, set.total);
  const failures = views.flatMap((v) => (v.failure ? [v.failure] : []));
  if (verdict === 'unknown' && set.total === 1) throw unavailable(1, failures);
  if (options.json) {
    const held = verdict === 'unknown' ? null : verdict === 'held';
    out.write(`${toJson({ key, held, holder: agreed ? publicHolder(agreed.holder!, agreed.ttl_ms) : null, quorum: quorumSize(set.total), instances: views.map(publicView) })}\n`);
  } else {
    out.write(agreed ? describe(key, agreed.holder!, agreed.ttl_ms ?? -1) : `${key}: ${verdict}\n`);
    if (set.total > 1) out.write(describeInstances(views, set.total, verdict));
  }
  if (verdict === 'unknown') {
    throw new UnavailableError(`cannot tell whether a majority holds ${key}: ${failures.length} of ${set.total} instances did not answer (${failures.map(failureText).join('; ')})`);
  }
  return verdict === 'held' ? 0 : 1;
}

/** The holder as status shows it; every field from the hash is escaped (it may be forged). */
export function describe(key: string, holder: Holder, pttlMs: number, nowMs: number = Date.now()): string {
  const since = holder.sinceMs === undefined ? 'unknown' : `${new Date(holder.sinceMs).toISOString()} (${formatDuration(nowMs - holder.sinceMs)} ago)`;
  const lines = [
    `${printable(key)}: ${holder.owner === '' ? 'closed by release --force until this lease runs out' : 'held'}`,
    `  host     ${printable(holder.host)}`,
    `  pid      ${printable(holder.pid)}${pidNote(holder, pttlMs)}`,
    `  command  ${printable(holder.cmd)}`,
    `  since    ${since}`,
    `  ttl left ${pttlMs >= 0 ? formatDuration(pttlMs) : 'none'} of ${holder.ttlMs === undefined ? 'unknown' : formatDuration(holder.ttlMs)}`,
    `  fence    ${printable(holder.fence)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** " (pid N is not running on this host: ...)" for a dead holder on this host, else "". */
function pidNote(holder: Holder, pttlMs: number): string {
  const dead = deadPidText(holder, pttlMs);
  return dead ? ` (${dead})` : '';
}

function describeInstances(views: InstanceView[], total: number, verdict: Verdict): string {
  const lines = views.map((v) => `  ${v.redis}  ${v.error ? `error: ${printable(v.error)}` : v.holder ? `held by ${printable(v.holder.host)} pid ${printable(v.holder.pid)} (fence ${printable(v.holder.fence)})` : 'free'}`);
  const summary = verdict === 'held' ? 'a majority agrees' : verdict === 'free' ? 'no majority holds it' : 'too few answered to tell';
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
  const failures = [...scans.flatMap((s, i) => (s.status === 'rejected' ? [failureText(instanceFailure(set.instances[i].target.label, s.reason))] : [])), ...set.unreachable.map(failureText)];
  if (failures.length >= quorumSize(set.total)) {
    throw new UnavailableError(`cannot list locks: ${failures.length} of ${set.total} instances did not answer (${failures.join('; ')})`);
  }
  const names = new Set(scans.flatMap((s) => (s.status === 'fulfilled' ? s.value : [])));
  const keys = [...names].flatMap((name) => keyFromLockName(config.prefix, name) ?? []).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const order = config.targets.map((target) => target.label);
  const rows: [string, { holder: Holder; ttlMs: number }][] = [];
  // A lock that could not be read is listed as such, never left out (exit 69 after the list).
  const unreadable: { key: string; error: string }[] = [];
  for (const key of keys) {
    const views = await inspectAll(set, lockKeys(config.prefix, key), order);
    const { verdict, agreed } = majority(views, set.total);
    if (agreed) rows.push([key, { holder: agreed.holder!, ttlMs: agreed.ttl_ms ?? -1 }]);
    else if (verdict === 'unknown') unreadable.push({ key, error: views.flatMap((v) => (v.error ? [set.total > 1 ? `${v.redis}: ${v.error}` : v.error] : [])).join('; ') });
  }
  // A name SCAN found can be anything (a forged hash): it is cut for showing, looked up whole.
  if (options.json) {
    const entries = [...rows.map(([key, { holder, ttlMs }]) => ({ key: cut(key), ...publicHolder(holder, ttlMs) })), ...unreadable.map(({ key, error }) => ({ key: cut(key), error }))];
    out.write(`${toJson(entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)))}\n`);
  } else if (rows.length === 0 && unreadable.length === 0) {
    out.write(`no locks held under ${config.prefix}\n`);
  } else {
    const shown = rows.length > 0 ? table(rows.map(([key, { holder, ttlMs }]) => ({ key, holder, ttlMs }))) : '';
    out.write(shown);
    const width = Math.max(3, ...shown.split('\n').map((line) => line.indexOf('  ')).filter((i) => i > 0));
    for (const { key, error } of unreadable) out.write(`${printable(cut(key)).padEnd(width)}  unreadable: ${printable(error)}\n`);
  }
  if (unreadable.length > 0) {
    const which = unreadable.map(({ key, error }) => `${cut(key)}: ${error}`).join('; ');
    throw new UnavailableError(`could not read ${unreadable.length} of the ${keys.length} locks under ${config.prefix} (${which})`);
  }
  return rows.length > 0 ? 0 : 1;
}

/** The list of held locks as a table; every key name and field is cut and escaped (they may be forged). */
export function table(rows: { key: string; holder: Holder; ttlMs: number }[], nowMs: number = Date.now()): string {
  const cells = [['KEY', 'HOST', 'PID', 'FOR', 'TTL LEFT', 'FENCE', 'COMMAND']].concat(
    rows.map(({ key, holder, ttlMs }) => [
      printable(cut(key)),
      printable(holder.host),
      `${printable(holder.pid)}${deadPidText(holder, undefined) ? ' (not running)' : ''}`,
      holder.sinceMs === undefined ? 'unknown' : formatDuration(nowMs - holder.sinceMs),
      ttlMs >= 0 ? formatDuration(ttlMs) : 'none',
      printable(holder.fence),
      printable(holder.cmd),
    ]),
  );
  const widths = cells[0].map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  return cells.map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n') + '\n';
}


/**
 * Every lock hash name on one instance. The whole listing gets --connect-timeout: a server
 * whose cursor never comes back to 0 (or that answers garbage) fails the instance, never hangs.
 */
async function scanLocks(instance: Instance, config: ConnectionConfig): Promise<string[]> {
  const names: string[] = [];
  const deadline = now() + config.connectTimeoutMs;
  let pages = 0;
  const unfinished = () => new AnsweredError(`SCAN did not finish within --connect-timeout (${formatDuration(config.connectTimeoutMs)}; a larger one lists more keys)`);
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
