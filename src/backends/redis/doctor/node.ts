// Everything doctor asks one Redis server, and the checks that follow from the answers. Only
// reads: INFO, CONFIG GET, TIME, HELLO/PING, and one EVAL that checks ACL grants without
// running them. A command the user may not run leaves its check "not checked" (WARN).

import type { Redis } from 'ioredis';
import { describeError, MalformedReplyError } from '../client/client.js';
import { formatDuration } from '../../../duration.js';
import { now, TimeoutError, withTimeout } from '../../../clock.js';
import { cut, parseCount } from '../../../untrusted.js';
import {
  clockCheck,
  maxmemoryCheck,
  persistenceCheck,
  replicasCheck,
  rttCheck,
  tlsCheck,
  unknown,
  versionCheck,
  type Check,
} from './checks.js';
import { grantChecks, grantsUncheckable, type GrantContext } from './grants.js';

export interface NodeContext extends GrantContext {
  /** The host dlock talks to (for the TLS check). */
  host: string;
  tls: boolean;
  user: string;
  ttlMs: number;
  /** How long one request may take: each command doctor sends, and dlock's per-request bound for the RTT check. */
  commandTimeoutMs: number;
  requestTimeoutMs: number;
  /** Set once a command timed out: why the server is taken as hung. */
  stalled?: string;
}

export interface NodeReport {
  checks: Check[];
  /** The server's clock minus this host's, when TIME answered. */
  clock?: { offsetMs: number; uncertaintyMs: number };
}

const SAMPLES = 5;

type Answer<T> = { value: T; error?: undefined } | { value?: undefined; error: string };

/**
 * One command within --connect-timeout. Once one has timed out the server is taken as hung:
 * the rest are not sent (each would wait the whole bound again), and `stalled` says so.
 */
async function ask<T>(context: NodeContext, node: Redis, request: () => Promise<T>): Promise<Answer<T>> {
  if (context.stalled) return { error: 'not asked: the server stopped answering' };
  try {
    return { value: await withTimeout(request(), context.commandTimeoutMs) };
  } catch (error) {
    noteBroken(context, node, error);
    return {
      error: /^NOPERM/.test(String((error as Error)?.message)) ? 'not allowed by the ACL' : describeError(error),
    };
  }
}

/** A command that timed out, or a reply that failed the connection (a malformed one): the server is not asked more. */
function noteBroken(context: NodeContext, node: Redis, error: unknown): void {
  if (error instanceof TimeoutError) context.stalled = `no answer within ${formatDuration(context.commandTimeoutMs)}`;
  else if (error instanceof MalformedReplyError || node.status !== 'ready') context.stalled = describeError(error);
}

/** "key:value" lines of INFO. */
function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n').flatMap((l) => l.split('\n'))) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

async function configGet(node: Redis, context: NodeContext, name: string): Promise<Answer<string | undefined>> {
  const answer = await ask(context, node, () => node.call('CONFIG', 'GET', name) as Promise<unknown>);
  if (answer.error !== undefined) return answer;
  const reply = answer.value;
  return { value: Array.isArray(reply) && reply.length >= 2 ? String(reply[1]) : undefined };
}

async function version(
  node: Redis,
  context: NodeContext,
  info: Map<string, string> | undefined,
): Promise<string | undefined> {
  if (info?.has('redis_version')) return info.get('redis_version');
  const hello = await ask(context, node, () => node.call('HELLO', '2') as Promise<unknown>);
  if (!Array.isArray(hello.value)) return undefined;
  const at = hello.value.indexOf('version');
  return at >= 0 && typeof hello.value[at + 1] === 'string' ? hello.value[at + 1] : undefined;
}

/** TIME several times; the sample with the shortest round trip bounds the offset best. */
async function sampleClock(
  node: Redis,
  context: NodeContext,
): Promise<Answer<{ rtts: number[]; offsetMs: number; uncertaintyMs: number }>> {
  const rtts: number[] = [];
  let best: { rtt: number; offsetMs: number } | undefined;
  for (let i = 0; i < SAMPLES; i++) {
    const wallBefore = Date.now();
    const started = now();
    const answer = await ask(context, node, () => node.time());
    const rtt = now() - started;
    if (answer.error !== undefined) return answer;
    const reply: unknown = answer.value;
    const [seconds, micros] = Array.isArray(reply) ? reply.map(Number) : [];
    const serverMs = seconds * 1000 + micros / 1000;
    if (!Number.isFinite(serverMs)) return { error: 'TIME answered something that is not a time' };
    rtts.push(rtt);
    const offsetMs = serverMs - (wallBefore + rtt / 2);
    if (!best || rtt < best.rtt) best = { rtt, offsetMs };
  }
  // Date.now() has whole milliseconds: one more of uncertainty.
  return { value: { rtts, offsetMs: best!.offsetMs, uncertaintyMs: best!.rtt / 2 + 1 } };
}

/** Round trips of a command every user may send (HELLO; PING before Redis 6), for a user without +time. */
async function sampleRtt(node: Redis, context: NodeContext): Promise<number[]> {
  const rtts: number[] = [];
  let ping = false;
  for (let i = 0; i < SAMPLES; i++) {
    const started = now();
    const answer = await ask(
      context,
      node,
      ping ? () => node.ping() : () => node.call('HELLO', '2') as Promise<unknown>,
    );
    if (answer.error === undefined) rtts.push(now() - started);
    else if (ping) return rtts;
    else ping = true;
  }
  return rtts;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function checkNode(node: Redis, context: NodeContext): Promise<NodeReport> {
  const checks: Check[] = [];
  const infoAnswer = await ask(context, node, () => node.info());
  const info = typeof infoAnswer.value === 'string' ? parseInfo(infoAnswer.value) : undefined;
  const noInfo = `INFO: ${infoAnswer.error}`;
  const serverVersion = await version(node, context, info);
  checks.push(versionCheck(serverVersion));
  const admin = 'grant +info and +config|get, or run doctor as an admin user too';

  const fromInfo = (field: string): Answer<string | undefined> | undefined =>
    info?.has(field) ? { value: info.get(field) } : undefined;
  const policy = fromInfo('maxmemory_policy') ?? (await configGet(node, context, 'maxmemory-policy'));
  const maxmemory = (fromInfo('maxmemory') ?? (await configGet(node, context, 'maxmemory'))).value;
  checks.push(
    policy.value === undefined
      ? unknown(
          'maxmemory-policy',
          'maxmemory-policy',
          `${noInfo}; CONFIG GET: ${policy.error ?? 'no such setting'}`,
          admin,
        )
      : maxmemoryCheck(policy.value, maxmemory === undefined ? undefined : Number(maxmemory)),
  );

  const aof = info?.get('aof_enabled');
  const appendonly =
    aof !== undefined ? { value: aof === '1' ? 'yes' : 'no' } : await configGet(node, context, 'appendonly');
  const appendfsync = await configGet(node, context, 'appendfsync');
  checks.push(
    appendonly.value === undefined
      ? unknown('persistence', 'AOF', `${noInfo}; CONFIG GET: ${appendonly.error ?? 'no such setting'}`, admin)
      : persistenceCheck(appendonly.value === 'yes', appendfsync.value, appendfsync.error ?? 'no such setting'),
  );

  checks.push(await replicas(node, context, info?.get('connected_slaves'), noInfo, admin));

  const uncheckable = grantsUncheckable(serverVersion);
  if (uncheckable === undefined) checks.push(...(await aclChecks(node, context)));
  else
    checks.push({
      name: 'acl',
      status: serverVersion && Number(serverVersion.split('.')[0]) < 6 ? 'OK' : 'WARN',
      message: uncheckable,
      fix: '',
    });

  checks.push(tlsCheck(context.tls, context.host));

  const clock = await sampleClock(node, context);
  let report: NodeReport['clock'];
  if (clock.value) {
    report = { offsetMs: clock.value.offsetMs, uncertaintyMs: clock.value.uncertaintyMs };
    checks.push(clockCheck(clock.value.offsetMs, clock.value.uncertaintyMs, context.ttlMs));
  } else {
    checks.push(
      unknown('clock', 'the clock offset', `TIME: ${clock.error}`, 'grant +time, or run doctor as an admin user too'),
    );
  }
  const rtts = clock.value?.rtts ?? (await sampleRtt(node, context));
  if (rtts.length > 0) checks.push(rttCheck(median(rtts), context.requestTimeoutMs, context.ttlMs));
  if (context.stalled)
    checks.push({
      name: 'answers',
      status: 'FAIL',
      message: `the server stopped answering (${context.stalled}); the checks after that were not made`,
      fix: 'check the server (a hang, a paused VM, a proxy, something that is not Redis)',
    });
  return { checks, clock: report };
}

async function aclChecks(node: Redis, context: NodeContext): Promise<Check[]> {
  if (context.stalled) return [unknown('acl', 'the ACL grants', 'not asked: the server stopped answering', '')];
  try {
    return await withTimeout(grantChecks(node, context, context.user), context.commandTimeoutMs);
  } catch (error) {
    noteBroken(context, node, error);
    if (/^NOPERM/.test(String((error as Error)?.message))) {
      return [
        {
          name: 'acl +eval',
          status: 'FAIL',
          message:
            `user ${context.user} may not run EVAL, needed for dlock run, acquire, renew and release (the ` +
            'lock scripts); the other grants were not checked',
          fix: `ACL SETUSER ${context.user} +eval`,
        },
      ];
    }
    return [unknown('acl', 'the ACL grants', describeError(error), '')];
  }
}

/**
 * The replicas check from INFO's connected_slaves and CONFIG's min-replicas-to-write. Either may
 * be anything a server chose to answer: a value that is not a count is "not checked", never
 * "NaN replica(s)" or a suggested --sync-replicas NaN.
 */
async function replicas(
  node: Redis,
  context: NodeContext,
  connected: string | undefined,
  noInfo: string,
  admin: string,
): Promise<Check> {
  if (connected === undefined) return unknown('replicas', 'replicas', noInfo, admin);
  const count = parseCount(connected, 0, Number.MAX_SAFE_INTEGER);
  if (count === undefined) {
    const why = `INFO answered connected_slaves ${notCount(connected)}`;
    return unknown('replicas', 'replicas', why, 'check that the server is Redis');
  }
  const minReplicas = await configGet(node, context, 'min-replicas-to-write');
  if (minReplicas.value === undefined) return replicasCheck(count, undefined, minReplicas.error ?? 'no such setting');
  const min = parseCount(minReplicas.value, 0, Number.MAX_SAFE_INTEGER);
  return replicasCheck(count, min, min === undefined ? `it answered ${notCount(minReplicas.value)}` : '');
}

/** A server's answer that should have been a count, quoted short for a message. */
function notCount(text: string): string {
  return `${JSON.stringify(cut(text, 40))}, not a count`;
}
