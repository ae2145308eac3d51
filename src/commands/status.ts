// dlock status [key]: who holds a lock (exit 0 held, 1 free), or every held lock under the prefix.

import type { ConnectionConfig } from '../config.js';
import { formatDuration } from '../duration.js';
import { UnavailableError } from '../errors.js';
import type { Holder } from '../lock/holder.js';
import { inspectOn, type LockState } from '../lock/inspect.js';
import { keyFromLockName, lockKeys, lockPattern } from '../lock/keys.js';
import { disconnectAll, describeError, type Instance } from '../redis/client.js';
import { openLockSet } from '../redlock/open.js';
import { quorumSize } from '../redlock/quorum.js';
import { withTimeout } from '../timeout.js';

export interface StatusOptions {
  json: boolean;
}

interface InstanceView {
  redis: string;
  held: boolean;
  holder?: Holder;
  ttl_ms?: number;
  fence_counter?: string;
  error?: string;
}

export async function status(config: ConnectionConfig, key: string | undefined, options: StatusOptions, out = process.stdout): Promise<number> {
  const set = await openLockSet(config, key ?? '');
  try {
    if (key === undefined) return await listHeld(set.instances, config, options, out);
    const views: InstanceView[] = await Promise.all(
      set.instances.map(async (instance) => {
        try {
          return view(instance, await inspectOn(instance, lockKeys(config.prefix, key), set.timeoutMs));
        } catch (error) {
          return { redis: instance.target.label, held: false, error: describeError(error) };
        }
      }),
    );
    for (const unreachable of set.unreachable) views.push({ redis: unreachable.split(': ')[0], held: false, error: unreachable.split(': ').slice(1).join(': ') });
    const agreed = majorityHolder(views, set.total);
    if (options.json) {
      out.write(`${JSON.stringify({ key, held: agreed !== undefined, holder: agreed ? publicHolder(agreed.holder!, agreed.ttl_ms) : null, quorum: quorumSize(set.total), instances: views.map(publicView) })}\n`);
    } else {
      out.write(agreed ? describe(key, agreed.holder!, agreed.ttl_ms ?? -1) : `${key}: free\n`);
      if (set.total > 1) out.write(describeInstances(views, set.total, agreed !== undefined));
    }
    return agreed ? 0 : 1;
  } finally {
    disconnectAll(set.instances);
  }
}

function view(instance: Instance, state: LockState): InstanceView {
  return { redis: instance.target.label, held: state.holder !== undefined, holder: state.holder, ttl_ms: state.pttlMs, fence_counter: state.counter };
}

/** The view whose owner holds a quorum of instances, if any. */
function majorityHolder(views: InstanceView[], total: number): InstanceView | undefined {
  const counts = new Map<string, number>();
  for (const v of views) if (v.holder) counts.set(v.holder.owner, (counts.get(v.holder.owner) ?? 0) + 1);
  for (const [owner, count] of counts) {
    if (count >= quorumSize(total)) return views.find((v) => v.holder?.owner === owner);
  }
  return undefined;
}

/** What status shows of a holder: everything but the owner token (a capability to release). */
function publicHolder(holder: Holder, ttlMs: number | undefined) {
  return { host: holder.host, pid: Number(holder.pid) || holder.pid, cmd: holder.cmd, since: new Date(holder.sinceMs).toISOString(), since_ms: holder.sinceMs, ttl_ms: holder.ttlMs, ttl_left_ms: ttlMs, fence: holder.fence };
}

function publicView(v: InstanceView) {
  return { redis: v.redis, held: v.held, ...(v.holder ? { holder: publicHolder(v.holder, v.ttl_ms) } : {}), ...(v.error ? { error: v.error } : {}) };
}

function describe(key: string, holder: Holder, pttlMs: number): string {
  const lines = [
    `${key}: held`,
    `  host     ${holder.host}`,
    `  pid      ${holder.pid}`,
    `  command  ${holder.cmd}`,
    `  since    ${new Date(holder.sinceMs).toISOString()} (${formatDuration(Date.now() - holder.sinceMs)} ago)`,
    `  ttl left ${pttlMs >= 0 ? formatDuration(pttlMs) : 'none'} of ${formatDuration(holder.ttlMs)}`,
    `  fence    ${holder.fence}`,
  ];
  return `${lines.join('\n')}\n`;
}

function describeInstances(views: InstanceView[], total: number, agreed: boolean): string {
  const lines = views.map((v) => `  ${v.redis}  ${v.error ? `error: ${v.error}` : v.holder ? `held by ${v.holder.host} pid ${v.holder.pid} (fence ${v.holder.fence})` : 'free'}`);
  const majority = agreed ? 'a majority agrees' : 'no majority holds it';
  return `instances (${quorumSize(total)} of ${total} needed; ${majority}):\n${lines.join('\n')}\n`;
}

/** Every held lock under the prefix, found with SCAN (never KEYS) on each instance. */
async function listHeld(instances: Instance[], config: ConnectionConfig, options: StatusOptions, out: NodeJS.WritableStream): Promise<number> {
  const held = new Map<string, { holder: Holder; ttlMs: number }>();
  let failures = 0;
  for (const instance of instances) {
    try {
      for (const name of await scanLocks(instance, config)) {
        const key = keyFromLockName(config.prefix, name);
        if (key === undefined || held.has(key)) continue;
        const state = await inspectOn(instance, lockKeys(config.prefix, key), config.connectTimeoutMs);
        if (state.holder) held.set(key, { holder: state.holder, ttlMs: state.pttlMs });
      }
    } catch (error) {
      failures++;
      if (failures === instances.length) throw new UnavailableError(`cannot list locks on ${instance.target.label}: ${describeError(error)}`);
    }
  }
  const rows = [...held].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (options.json) {
    out.write(`${JSON.stringify(rows.map(([key, { holder, ttlMs }]) => ({ key, ...publicHolder(holder, ttlMs) })))}\n`);
  } else if (rows.length === 0) {
    out.write(`no locks held under ${config.prefix}\n`);
  } else {
    const table = [['KEY', 'HOST', 'PID', 'FOR', 'TTL LEFT', 'FENCE', 'COMMAND']].concat(
      rows.map(([key, { holder, ttlMs }]) => [key, holder.host, holder.pid, formatDuration(Date.now() - holder.sinceMs), formatDuration(ttlMs), holder.fence, holder.cmd]),
    );
    const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
    out.write(table.map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]))).join('  ')).join('\n') + '\n');
  }
  return rows.length > 0 ? 0 : 1;
}

async function scanLocks(instance: Instance, config: ConnectionConfig): Promise<string[]> {
  const names: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await withTimeout(instance.client.scan(cursor, 'MATCH', lockPattern(config.prefix), 'COUNT', 500, 'TYPE', 'hash'), config.connectTimeoutMs);
    cursor = next;
    names.push(...batch);
  } while (cursor !== '0');
  return names;
}
