// dlock doctor on etcd: each endpoint of the URL is checked on its own (probe.ts), then the
// endpoints against each other: they must be members of one cluster. The command prints the report
// (src/commands/doctor.ts); the entry (../index.ts) loads this module only for doctor.

import type { DoctorCheck, DoctorOptions, DoctorReport } from '../../../backend/doctor.js';
import type { MemberFailure } from '../../../backend/failure.js';
import type { EtcdConnection } from '../connection.js';
import { clusterCheck } from './checks.js';
import { probeEndpoint } from './probe.js';

export async function doctor(connection: EtcdConnection, options: DoctorOptions): Promise<DoctorReport> {
  // One at a time: an endpoint of a loaded cluster is not asked by several probes at once.
  const members: DoctorReport['members'] = [];
  const unchecked: MemberFailure[] = [];
  const clusters: { label: string; clusterId: string }[] = [];
  for (const endpoint of connection.endpoints) {
    const { label } = endpoint;
    const report = await probeEndpoint(connection, endpoint, options.ttlMs);
    if (!report.reachable) {
      unchecked.push(report.failure);
      members.push({ label, reachable: false, checks: [connectCheck(report.failure)] });
      continue;
    }
    members.push({ label, reachable: true, checks: report.checks });
    if (report.clusterId !== undefined) clusters.push({ label, clusterId: report.clusterId });
  }
  const between = connection.endpoints.length > 1 && clusters.length > 1 ? [clusterCheck(clusters)] : [];
  return { members, between: { heading: 'between the endpoints', checks: between }, unchecked };
}

/** An endpoint that gave no status: not reached, or what answered is not etcd's gateway. */
function connectCheck(failure: MemberFailure): DoctorCheck {
  return {
    name: 'connect',
    status: 'FAIL',
    message: failure.reached ? failure.reason : `cannot reach it: ${failure.reason}`,
    fix: failure.reached ? '' : 'check the URL, the network and the server',
  };
}
