// dlock doctor on Redis: check every configured Redis (each master of a Cluster, the master a set
// of sentinels names) and, with several, the spread of their clocks. The command prints the report
// (src/commands/doctor.ts); the entry (../index.ts) loads this module only for doctor.

import type { Redis } from 'ioredis';
import type { DoctorOptions, DoctorReport } from '../../../backend/doctor.js';
import { connectQuorum } from '../connect.js';
import { instanceTimeoutMs } from '../../../timing.js';
import { disconnectAll, type Instance } from '../client/client.js';
import { isCluster } from '../client/nodes.js';
import type { RedisConnection } from '../connection.js';
import { clockSpreadCheck, type Check } from './checks.js';
import { checkNode, type NodeReport } from './node.js';

interface InstanceResult {
  label: string;
  reachable: boolean;
  checks: Check[];
  clock?: NodeReport['clock'];
}

export async function doctor(connection: RedisConnection, options: DoctorOptions): Promise<DoctorReport> {
  const { instances, failures } = await connectQuorum(connection.targets, connection.connectTimeoutMs);
  const results: InstanceResult[] = [];
  try {
    for (const instance of instances) results.push(...(await checkInstance(instance, connection, options)));
  } finally {
    disconnectAll(instances);
  }
  for (const failure of failures) {
    // A server that answered (a replica, a wrong password) says what to change in its reason.
    const message = failure.reached ? failure.reason : `cannot reach it: ${failure.reason}`;
    results.push({
      label: failure.label,
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
  const order = connection.targets.map((target) => target.label);
  results.sort((a, b) => order.indexOf(a.label.split(' ')[0]) - order.indexOf(b.label.split(' ')[0]));

  const clocks = results.flatMap((r) => (r.clock ? [{ label: r.label, ...r.clock }] : []));
  const between = connection.targets.length > 1 && clocks.length > 1 ? [clockSpreadCheck(clocks, options.ttlMs)] : [];
  return {
    members: results.map(({ label, reachable, checks }) => ({ label, reachable, checks })),
    between: { heading: 'between the Redlock instances', checks: between },
    unchecked: failures,
  };
}

/** One result per data node of the instance: the server, the master the sentinels name, or each master of a Cluster. */
async function checkInstance(
  instance: Instance,
  connection: RedisConnection,
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
  const { targets, connectTimeoutMs } = connection;
  const context = {
    prefix: connection.prefix,
    db: target.db,
    redlock: targets.length > 1,
    tls: target.tls,
    user: target.username ?? 'default',
    ttlMs: options.ttlMs,
    commandTimeoutMs: connectTimeoutMs,
    requestTimeoutMs: instanceTimeoutMs(connectTimeoutMs, options.ttlMs, targets.length),
  };
  const results: InstanceResult[] = [];
  for (const { node, label, host } of nodes) {
    const report = await checkNode(node, { ...context, host });
    results.push({ label, reachable: true, ...report });
  }
  return results;
}
