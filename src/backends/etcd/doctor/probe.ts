// Everything doctor asks one etcd endpoint, and the checks that follow from the answers: the
// status (version, leader, cluster), the alarms, then as the user given a probe key under the
// prefix on a short lease (authentication, permission, the lease minimum). The probe key is
// `<prefix>dlock-doctor-probe.<hex>`: no "/" after the prefix, so it is in no lock's line.
// Once a request got no answer the endpoint is taken as hung and asked nothing more.

import type { DoctorCheck } from '../../../backend/doctor.js';
import type { MemberFailure } from '../../../backend/failure.js';
import { cut } from '../../../untrusted.js';
import { b64, isObject, positive, prefixEnd, prefixStart } from '../codec.js';
import type { EtcdConnection, Endpoint } from '../connection.js';
import { CODE, Gateway, GatewayError } from '../gateway.js';
import { leaseHexOf, leaseOfOwner, newLeaseOwner } from '../keys.js';
import {
  alarmCheck,
  authCheck,
  leaderCheck,
  leaseCheck,
  notChecked,
  permissionCheck,
  versionCheck,
  type AuthFinding,
} from './checks.js';

export type EndpointReport =
  | { reachable: true; checks: DoctorCheck[]; clusterId: string | undefined }
  | { reachable: false; failure: MemberFailure };

export async function probeEndpoint(
  connection: EtcdConnection,
  endpoint: Endpoint,
  ttlMs: number,
): Promise<EndpointReport> {
  const one = { endpoints: [endpoint], tls: connection.tls, tlsFiles: connection.tlsFiles };
  // etcd 3.4 answers status, alarms and leases without a token: they are asked as nobody.
  const anonymous = new Gateway(one);
  const user = connection.user;
  const authed = user === undefined ? anonymous : new Gateway({ ...one, user, password: connection.password });
  const timeoutMs = connection.connectTimeoutMs;
  try {
    let status;
    try {
      status = await anonymous.call('/v3/maintenance/status', {}, timeoutMs);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return { reachable: false, failure: error.failure };
    }
    const header = isObject(status.header) ? status.header : {};
    const checks = [
      versionCheck(typeof status.version === 'string' ? cut(status.version, 64) : undefined),
      leaderCheck(uint64(status.leader), uint64(header.member_id)),
    ];
    let stalled: string | undefined;
    /** One step's checks, or "not checked" when the endpoint stopped answering or the step failed. */
    const step = async (name: string, what: string, run: () => Promise<DoctorCheck[]>) => {
      if (stalled !== undefined) return checks.push(notChecked(name, `${what}: ${stalled}`));
      try {
        checks.push(...(await run()));
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        if (!error.failure.reached) stalled = `the endpoint stopped answering (${error.failure.reason})`;
        checks.push(notChecked(name, `${what}: ${stalled ?? error.failure.reason}`));
      }
    };
    await step('alarms', 'the alarms', async () => [
      alarmCheck(alarmsOf(await anonymous.call('/v3/maintenance/alarm', {}, timeoutMs))),
    ]);
    await step('probe key', 'auth, permission and the lease minimum', () =>
      probeKey(connection.prefix, user, anonymous, authed, ttlMs, timeoutMs),
    );
    return { reachable: true, checks, clusterId: uint64(header.cluster_id) };
  } finally {
    anonymous.close();
    authed.close();
  }
}

/** A member or cluster id (uint64, past int64's range) as a decimal string; undefined when missing, 0 or not one. */
function uint64(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value)) return undefined;
  const id = BigInt(value);
  return id > 0n && id < 2n ** 64n ? id.toString() : undefined;
}

/** The alarms of a /v3/maintenance/alarm reply: each member's (hex) and its kind. */
function alarmsOf(reply: Record<string, unknown>): { member: string; alarm: string }[] {
  const alarms = Array.isArray(reply.alarms) ? reply.alarms : [];
  return alarms.slice(0, 100).flatMap((one) => {
    if (!isObject(one)) return [];
    // The enum as its name (the gateway's way) or its number; NONE (0) is left out, so a bare entry is none.
    const kind = one.alarm === 1 ? 'NOSPACE' : one.alarm === 2 ? 'CORRUPT' : one.alarm;
    if (typeof kind !== 'string' || kind === 'NONE') return [];
    return [{ member: uint64(one.memberID) ?? '', alarm: cut(kind, 32) }];
  });
}

/**
 * Grant a probe lease with TTL 1 (etcd answers its minimum), put and read a probe key on it under the
 * prefix as the user, delete it, revoke the lease: the auth, permission and lease minimum checks.
 */
async function probeKey(
  prefix: string,
  user: string | undefined,
  anonymous: Gateway,
  authed: Gateway,
  ttlMs: number,
  timeoutMs: number,
): Promise<DoctorCheck[]> {
  const lease = leaseOfOwner(newLeaseOwner())!;
  const granted = await anonymous.call('/v3/lease/grant', { ID: lease, TTL: '1' }, timeoutMs);
  const minimum = positive(granted.TTL, 9_000_000_000);
  const checks: DoctorCheck[] = [];
  try {
    let auth: AuthFinding = user === undefined ? { kind: 'off' } : { kind: 'authenticated', user };
    let denied = false;
    const key = `${prefix}dlock-doctor-probe.${leaseHexOf(lease)}`;
    const write = async (gateway: Gateway) => {
      const range = { key: prefixStart(prefix), range_end: prefixEnd(prefix) };
      const success = [
        { request_put: { key: b64(key), lease } },
        { request_range: { ...range, limit: '1', keys_only: true } },
      ];
      await gateway.call('/v3/kv/txn', { success }, timeoutMs);
      await gateway.call('/v3/kv/txn', { success: [{ request_delete_range: { key: b64(key) } }] }, timeoutMs);
    };
    try {
      await write(authed);
    } catch (error) {
      if (!(error instanceof GatewayError) || error.code === undefined) throw error;
      const reason = error.failure.reason;
      if (user !== undefined && /authentication is not enabled/.test(reason)) {
        auth = { kind: 'unused', user };
        await write(anonymous).catch((again: unknown) => {
          if (!(again instanceof GatewayError) || again.code !== CODE.permissionDenied) throw again;
          denied = true;
        });
      } else if (user !== undefined && /authentication failed|invalid user|invalid auth/.test(reason)) {
        auth = { kind: 'refused', user, reason: reason.replace(/^etcdserver: /, '') };
      } else if (user === undefined && /user name is empty|invalid auth token/.test(reason)) {
        auth = { kind: 'needed' };
      } else if (error.code === CODE.permissionDenied) {
        denied = true;
      } else throw error;
    }
    checks.push(authCheck(auth));
    if (auth.kind !== 'refused' && auth.kind !== 'needed') checks.push(permissionCheck(prefix, user, denied));
  } finally {
    await anonymous.call('/v3/lease/revoke', { ID: lease }, timeoutMs).catch(() => undefined);
  }
  checks.push(
    minimum === undefined ? notChecked('lease minimum', 'the grant answered no TTL') : leaseCheck(minimum, ttlMs),
  );
  return checks;
}
