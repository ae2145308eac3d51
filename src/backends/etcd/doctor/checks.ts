// What doctor concludes from one etcd endpoint's answers: pure functions from facts to OK/WARN/FAIL,
// each with the change to make. The facts are gathered in probe.ts; the rules are in
// docs/operations/etcd.md ("dlock doctor on etcd").

import type { DoctorCheck } from '../../../backend/doctor.js';
import { formatDuration } from '../../../duration.js';

const ok = (name: string, message: string): DoctorCheck => ({ name, status: 'OK', message, fix: '' });

/** A check that could not be made: why, as a WARN. */
export function notChecked(name: string, why: string): DoctorCheck {
  return { name, status: 'WARN', message: `not checked: ${why}`, fix: '' };
}

/** dlock speaks the /v3 gateway etcd serves from 3.4 on, and is tested on 3.4. */
export function versionCheck(version: string | undefined): DoctorCheck {
  const name = 'version';
  if (version === undefined) return notChecked(name, 'the status answered no version');
  const [major, minor] = version.split('.').map(Number);
  if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor))
    return notChecked(name, `the status answered an unknown version "${version}"`);
  if (major < 3 || (major === 3 && minor < 4))
    return {
      name,
      status: 'WARN',
      message: `etcd ${version}: dlock speaks the /v3 JSON gateway of etcd 3.4 and later, and is tested on 3.4`,
      fix: 'upgrade etcd to 3.4 or later',
    };
  return ok(name, `etcd ${version}`);
}

/** Without a leader the cluster commits nothing: no lock is taken or renewed. */
export function leaderCheck(leader: string | undefined, member: string | undefined): DoctorCheck {
  const name = 'leader';
  if (leader === undefined)
    return {
      name,
      status: 'FAIL',
      message: 'no leader: the cluster commits no write, so no lock can be taken or renewed',
      fix: 'bring a majority of the members back up (etcdctl endpoint status --cluster)',
    };
  const hex = hexOf(leader);
  return ok(name, leader === member ? `this member leads (${hex})` : `member ${hex} leads`);
}

/** The alarms etcd raised: NOSPACE stops every write, CORRUPT says a member's data differs. */
export function alarmCheck(alarms: { member: string; alarm: string }[]): DoctorCheck {
  const name = 'alarms';
  if (alarms.length === 0) return ok(name, 'no alarm raised');
  const on = (alarm: string) =>
    alarms
      .filter((one) => one.alarm === alarm)
      .map((one) => (one.member === '' ? '?' : hexOf(one.member)))
      .join(', ');
  if (alarms.some((one) => one.alarm === 'NOSPACE'))
    return {
      name,
      status: 'FAIL',
      message:
        `NOSPACE (member ${on('NOSPACE')}): the database is over its quota and etcd refuses every write, so ` +
        'no lock can be taken or renewed',
      fix: 'etcdctl defrag, raise --quota-backend-bytes, then etcdctl alarm disarm',
    };
  if (alarms.some((one) => one.alarm === 'CORRUPT'))
    return {
      name,
      status: 'FAIL',
      message: `CORRUPT (member ${on('CORRUPT')}): a member's data differs from the others'`,
      fix: 'replace the corrupt member (etcdctl member remove, then add it back empty), then etcdctl alarm disarm',
    };
  return {
    name,
    status: 'WARN',
    message: `alarms dlock does not know: ${alarms.map((one) => one.alarm).join(', ')}`,
    fix: 'etcdctl alarm list',
  };
}

/** How etcd's authentication met the user given (or none). */
export type AuthFinding =
  | { kind: 'off' }
  | { kind: 'authenticated'; user: string }
  | { kind: 'unused'; user: string }
  | { kind: 'refused'; user: string; reason: string }
  | { kind: 'needed' };

export function authCheck(finding: AuthFinding): DoctorCheck {
  const name = 'auth';
  switch (finding.kind) {
    case 'off':
      return ok(name, "etcd's authentication is off and no user is given");
    case 'authenticated':
      return ok(name, `user ${finding.user} authenticates`);
    case 'unused':
      return {
        name,
        status: 'WARN',
        message:
          `etcd's authentication is not enabled: the password of user ${finding.user} is unused, and anyone ` +
          'who reaches the endpoint may take or break locks',
        fix: 'etcdctl auth enable (once root and the user exist), or leave the user out of the URL',
      };
    case 'refused':
      return {
        name,
        status: 'FAIL',
        message: `etcd refused user ${finding.user}: ${finding.reason}`,
        fix: 'check the user name and the password (in the URL or DLOCK_ETCD_PASSWORD)',
      };
    case 'needed':
      return {
        name,
        status: 'FAIL',
        message: "etcd's authentication is enabled and no user is given: every request is refused",
        fix: 'give the user in the URL (etcd://USER@host:2379) and its password in DLOCK_ETCD_PASSWORD',
      };
  }
}

/** Whether the user may write, read and delete under the prefix (one probe key, on a lease). */
export function permissionCheck(prefix: string, user: string | undefined, denied: boolean): DoctorCheck {
  const name = 'permission';
  const who = user === undefined ? 'dlock' : `user ${user}`;
  const range = prefix === '' ? 'every key (--prefix is empty)' : `the prefix "${prefix}"`;
  if (!denied) return ok(name, `${who} may write, read and delete keys under ${range}`);
  return {
    name,
    status: 'FAIL',
    message: `permission denied: grant readwrite on the prefix (${who} may not write, read and delete under ${range})`,
    fix:
      `etcdctl role grant-permission ROLE --prefix=true readwrite '${prefix}' and ` +
      `etcdctl user grant-role ${user ?? 'USER'} ROLE`,
  };
}

/** etcd raises a TTL under its minimum (1.5 × the election timeout): a shorter --ttl runs longer. */
export function leaseCheck(minimumS: number, ttlMs: number): DoctorCheck {
  const name = 'lease minimum';
  const applied = Math.max(minimumS, Math.ceil(ttlMs / 1000));
  const ttl = formatDuration(ttlMs);
  if (minimumS * 1000 > ttlMs)
    return {
      name,
      status: 'WARN',
      message:
        `--ttl ${ttl} runs as a ${applied}s lease on this cluster (its minimum is ${minimumS}s): a lost ` +
        'holder keeps the lock that much longer',
      fix: `use --ttl ${minimumS}s or more, or lower etcd's --election-timeout`,
    };
  return ok(name, `${minimumS}s; --ttl ${ttl} runs as a ${applied}s lease`);
}

/** Endpoints of one URL must be members of one cluster: failover between two clusters is two locks. */
export function clusterCheck(members: { label: string; clusterId: string }[]): DoctorCheck {
  const name = 'cluster';
  const ids = new Set(members.map((one) => one.clusterId));
  if (ids.size <= 1)
    return ok(name, `the ${members.length} endpoints are members of one cluster (${hexOf([...ids][0] ?? '0')})`);
  return {
    name,
    status: 'FAIL',
    message:
      'the endpoints are not one cluster: ' +
      members.map((one) => `${one.label} is in ${hexOf(one.clusterId)}`).join(', ') +
      '; dlock fails over between them and would hold a lock in each',
    fix: 'list the members of one cluster only (etcdctl member list)',
  };
}

/** An id (decimal int64) as etcdctl prints it. */
function hexOf(id: string): string {
  return BigInt(id).toString(16);
}
