// dlock doctor: check every configured Redis (each master of a Cluster, the master a set of
// sentinels names) against what dlock's guarantees need, and say what to change. Exit 0
// without a FAIL, 1 with one, 69 when an instance could not be reached (the others are
// still checked and shown).

import type { Redis } from 'ioredis';
import type { ConnectionConfig } from '../config/index.js';
import { UnavailableError } from '../errors.js';
import { connectQuorum } from '../backends/redis/connect.js';
import { instanceTimeoutMs } from '../timing.js';
import { disconnectAll, failureText, type Instance } from '../backends/redis/client/client.js';
import { isCluster } from '../backends/redis/client/nodes.js';
import { stdout, type Output } from '../output.js';
import { printable, toJson } from '../untrusted.js';
import { clockSpreadCheck, type Check, type Status } from '../backends/redis/doctor/checks.js';
import { checkNode, type NodeReport } from '../backends/redis/doctor/node.js';

export interface DoctorOptions {
  json: boolean;
  ttlMs: number;
  /** Columns to wrap the text report to (default 80). */
  width?: number;
}

interface InstanceResult {
  redis: string;
  reachable: boolean;
  checks: Check[];
  clock?: NodeReport['clock'];
}

export async function doctor(config: ConnectionConfig, options: DoctorOptions, out: Output = stdout): Promise<number> {
  const { instances, failures } = await connectQuorum(config.targets, config.connectTimeoutMs);
  const results: InstanceResult[] = [];
  try {
    for (const instance of instances) results.push(...(await checkInstance(instance, config, options)));
  } finally {
    disconnectAll(instances);
  }
  for (const failure of failures) {
    // A server that answered (a replica, a wrong password) says what to change in its reason.
    const message = failure.reached ? failure.reason : `cannot reach it: ${failure.reason}`;
    results.push({
      redis: failure.label,
      reachable: false,
      checks: [
        {
          name: 'connect',
          status: 'FAIL',
          message,
          fix: failure.reached ? '' : 'check the URL, the network and the server',
        },
      ],
    });
  }
  const order = config.targets.map((target) => target.label);
  results.sort((a, b) => order.indexOf(a.redis.split(' ')[0]) - order.indexOf(b.redis.split(' ')[0]));

  const clocks = results.flatMap((r) => (r.clock ? [{ label: r.redis, ...r.clock }] : []));
  const overall: Check[] =
    config.targets.length > 1 && clocks.length > 1 ? [clockSpreadCheck(clocks, options.ttlMs)] : [];
  const all = [...results.flatMap((r) => r.checks), ...overall];
  const worst: Status = all.some((c) => c.status === 'FAIL')
    ? 'FAIL'
    : all.some((c) => c.status === 'WARN')
      ? 'WARN'
      : 'OK';

  if (options.json) {
    const instances = results.map(({ redis, reachable, checks }) => ({ redis, reachable, checks }));
    out.write(`${toJson({ status: worst, ttl_ms: options.ttlMs, instances, checks: overall })}\n`);
  } else {
    out.write(report(results, overall, all, options.width ?? 80));
  }
  if (failures.length > 0) {
    throw new UnavailableError(
      `doctor could not check ${failures.length} of ${config.targets.length} instances ` +
        `(${failures.map(failureText).join('; ')})`,
    );
  }
  return worst === 'FAIL' ? 1 : 0;
}

/** One result per data node of the instance: the server, the master the sentinels name, or each master of a Cluster. */
async function checkInstance(
  instance: Instance,
  config: ConnectionConfig,
  options: DoctorOptions,
): Promise<InstanceResult[]> {
  const { target, client } = instance;
  const nodes: { node: Redis; label: string; host: string }[] = isCluster(client)
    ? client.nodes('master').map((node) => ({
        node,
        label: `${target.label} node ${node.options.host}:${node.options.port}`,
        host: node.options.host ?? target.host,
      }))
    : target.kind === 'sentinel'
      ? [
          {
            node: client,
            label: `${target.label} master ${client.stream?.remoteAddress}:${client.stream?.remotePort}`,
            host: client.stream?.remoteAddress ?? target.host,
          },
        ]
      : [{ node: client, label: target.label, host: target.host }];
  const context = {
    prefix: config.prefix,
    db: target.db,
    redlock: config.targets.length > 1,
    tls: target.tls,
    user: target.username ?? 'default',
    ttlMs: options.ttlMs,
    commandTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: instanceTimeoutMs(config.connectTimeoutMs, options.ttlMs, config.targets.length),
  };
  const results: InstanceResult[] = [];
  for (const { node, label, host } of nodes) {
    const report = await checkNode(node, { ...context, host });
    results.push({ redis: label, reachable: true, ...report });
  }
  return results;
}

const MARK: Record<Status, string> = { OK: 'OK  ', WARN: 'WARN', FAIL: 'FAIL' };

/**
 * `first` then `text`, broken at spaces into lines of at most `columns`, the ones after the first
 * starting with `indent`; a word longer than a line has to itself stays whole.
 */
function wrap(first: string, text: string, indent: string, columns: number): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(' ')) {
    if (!empty && line.length + 1 + word.length > columns) {
      lines.push(line);
      line = indent;
      empty = true;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  return [...lines, line];
}

function report(results: InstanceResult[], overall: Check[], all: Check[], columns: number): string {
  const width = Math.max(...all.map((c) => c.name.length));
  const indent = ' '.repeat(10 + width);
  const lines = (checks: Check[]) =>
    checks.flatMap((c) => [
      ...wrap(`  ${MARK[c.status]}  ${c.name.padEnd(width)}  `, printable(c.message), indent, columns),
      ...(c.fix ? wrap(indent, `fix: ${printable(c.fix)}`, indent, columns) : []),
    ]);
  const blocks = results.map((r) => [r.redis, ...lines(r.checks)].join('\n'));
  if (overall.length > 0) blocks.push(['between the Redlock instances', ...lines(overall)].join('\n'));
  const count = (status: Status) => all.filter((c) => c.status === status).length;
  return `${blocks.join('\n\n')}\n\n${count('FAIL')} FAIL, ${count('WARN')} WARN, ${count('OK')} OK\n`;
}
