// What doctor concludes from one server's settings: pure functions from facts to OK/WARN/FAIL,
// each with the change to make. The facts are gathered in probe.ts; thresholds are in
// docs/operations/doctor.md.

import { formatDuration } from '../../../duration.js';
import { driftMs, schedulingMarginMs } from '../../../timing.js';
import type { DoctorCheck, DoctorStatus } from '../../../backend/doctor.js';

export type Status = DoctorStatus;
export type Check = DoctorCheck;

const ok = (name: string, message: string): Check => ({ name, status: 'OK', message, fix: '' });

/** Not known because the server refused the command that reads it (an ACL), or did not say. */
export function unknown(name: string, what: string, why: string, fix: string): Check {
  return { name, status: 'WARN', message: `not checked: ${what} (${why})`, fix };
}

/** allkeys-* may evict a fence counter (it has no TTL): the next token goes back. volatile-* may evict a held lock. */
export function maxmemoryCheck(policy: string, maxmemoryBytes: number | undefined): Check {
  const name = 'maxmemory-policy';
  const fix = 'CONFIG SET maxmemory-policy noeviction (and set it in redis.conf)';
  if (policy === 'noeviction') return ok(name, 'noeviction: nothing dlock stores is ever evicted');
  if (policy.startsWith('allkeys-')) {
    return {
      name,
      status: 'FAIL',
      message:
        `${policy}: once memory reaches maxmemory, Redis may evict a fence counter and the next holder's ` +
        'fencing token goes back (4 -> 1)',
      fix,
    };
  }
  if (policy.startsWith('volatile-')) {
    if (!maxmemoryBytes)
      return ok(
        name,
        `${policy} without a maxmemory limit: nothing is evicted (fence counters have no TTL, so are never candidates)`,
      );
    return {
      name,
      status: 'WARN',
      message:
        `${policy} with maxmemory ${maxmemoryBytes} bytes: fence counters are safe (no TTL), but a held ` +
        'lock (it has a TTL) can be evicted when memory fills; its holder notices at the next renewal, and only ' +
        'fencing protects the resource until then',
      fix,
    };
  }
  return { name, status: 'WARN', message: `unknown policy "${policy}"`, fix };
}

/** Without AOF a restart loses the counters; appendfsync decides how much a crash of the host loses. */
export function persistenceCheck(aof: boolean, appendfsync: string | undefined, whyUnknown = ''): Check {
  const name = 'persistence';
  if (!aof) {
    return {
      name,
      status: 'WARN',
      message:
        'no AOF: a restart loses held locks and rolls the fence counters back to the last RDB snapshot (or to ' +
        'nothing), so fencing tokens go back',
      fix: 'CONFIG SET appendonly yes and CONFIG SET appendfsync always (and in redis.conf)',
    };
  }
  if (appendfsync === 'always')
    return ok(name, 'AOF with appendfsync always: every acknowledged lock and fence survives a crash');
  if (appendfsync === undefined)
    return unknown(
      name,
      'AOF is on, appendfsync',
      `CONFIG GET: ${whyUnknown}`,
      'grant +config|get, or run doctor as an admin user too',
    );
  const loses =
    appendfsync === 'everysec' ? 'up to a second of writes' : 'the writes the OS had not flushed (up to ~30s)';
  return {
    name,
    status: 'WARN',
    message:
      `AOF with appendfsync ${appendfsync}: a crash of the Redis process survives, but a crash of its host ` +
      `loses ${loses}, and a fence counter raised then goes back`,
    fix: 'CONFIG SET appendfsync always (and in redis.conf): each write waits for fsync',
  };
}

/** A failover can promote a replica that never got the lock or the latest fence. */
export function replicasCheck(replicas: number, minReplicasToWrite: number | undefined, whyUnknown = ''): Check {
  const name = 'replicas';
  if (replicas === 0) return ok(name, 'no replicas');
  if (minReplicasToWrite === undefined)
    return unknown(
      name,
      `${replicas} replica(s), min-replicas-to-write`,
      `CONFIG GET: ${whyUnknown}`,
      'grant +config|get, or run doctor as an admin user too',
    );
  if (minReplicasToWrite > 0) return ok(name, `${replicas} replica(s), min-replicas-to-write ${minReplicasToWrite}`);
  return {
    name,
    status: 'WARN',
    message:
      `${replicas} replica(s) and min-replicas-to-write 0: replication is asynchronous, so a failover can ` +
      'promote a replica that had not received a lock or its fence counter (two holders, a token that goes back)',
    fix:
      `dlock run --sync-replicas ${replicas} (WAIT for the replicas after acquiring), and/or CONFIG SET ` +
      'min-replicas-to-write 1',
  };
}

/** The lock scripts set several hash fields in one HSET (4.0); status lists with SCAN ... TYPE (6.0). */
export function versionCheck(version: string | undefined): Check {
  const name = 'version';
  if (version === undefined)
    return unknown(
      name,
      'the server version',
      'neither INFO nor HELLO answered it',
      'run doctor with a user that may run INFO',
    );
  const major = Number(version.split('.')[0]);
  const fix = 'upgrade Redis (6.0 or later; 7 for the ACL check)';
  if (!(major >= 4))
    return {
      name,
      status: 'FAIL',
      message: `Redis ${version}: dlock's lock scripts need 4.0 or later (HSET with several fields)`,
      fix,
    };
  if (major < 6)
    return {
      name,
      status: 'WARN',
      message:
        `Redis ${version}: locks work, but \`dlock status\` without a key needs 6.0 (SCAN ... TYPE), and ` +
        'there are no ACLs or TLS before 6.0',
      fix,
    };
  return ok(name, `Redis ${version}`);
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/i;

/** Plain TCP to another host sends passwords and owner tokens in clear. */
export function tlsCheck(tls: boolean, host: string): Check {
  const name = 'tls';
  if (tls) return ok(name, 'TLS (rediss://), certificate verified');
  if (LOOPBACK.test(host)) return ok(name, `plain TCP to ${host} (loopback: it does not leave this host)`);
  return {
    name,
    status: 'WARN',
    message: `plain TCP to ${host}: the password and the owner tokens cross the network in clear`,
    fix: 'enable TLS on the server (tls-port) and use rediss:// URLs',
  };
}

/**
 * How far a clock may be off before it matters, for leases of `ttlMs`. A steady offset does no
 * harm by itself (Redis and dlock each time leases on their own clock), but it says the clock
 * is not synchronised, and the step that corrects it shortens leases on that server:
 * - warn: the scheduling margin plus the drift allowance (502ms at a 30s TTL), what dlock
 *   leaves between its own deadline and the server's expiry;
 * - fail: two thirds of the TTL (20s at 30s): a step that large expires a lease before its next
 *   renewal, even when every renewal succeeds.
 */
export function clockLimits(ttlMs: number): { warnMs: number; failMs: number } {
  return { warnMs: schedulingMarginMs(ttlMs) + driftMs(ttlMs), failMs: Math.floor((2 * ttlMs) / 3) };
}

/** Redis' clock against this host's: offset (server minus local) known within ±uncertainty. */
export function clockCheck(offsetMs: number, uncertaintyMs: number, ttlMs: number): Check {
  const name = 'clock';
  const { warnMs, failMs } = clockLimits(ttlMs);
  const surely = Math.max(0, Math.abs(offsetMs) - uncertaintyMs);
  const side = offsetMs >= 0 ? 'ahead of' : 'behind';
  const measured =
    `the server's clock is ${formatDuration(Math.abs(offsetMs))} ${side} this host's ` +
    `(±${formatDuration(Math.ceil(uncertaintyMs))})`;
  const fix = 'synchronise both clocks (chrony or ntpd, slewing rather than stepping)';
  if (surely > failMs)
    return {
      name,
      status: 'FAIL',
      message:
        `${measured}, more than ${formatDuration(failMs)} (2/3 of a ${formatDuration(ttlMs)} TTL): the step ` +
        'that corrects it expires leases before their next renewal',
      fix,
    };
  if (surely > warnMs)
    return {
      name,
      status: 'WARN',
      message:
        `${measured}, more than ${formatDuration(warnMs)} (dlock's margin at a ${formatDuration(ttlMs)} ` +
        `TTL): the step that corrects it can end a lease before dlock's own deadline`,
      fix,
    };
  return ok(name, `${measured}; within ${formatDuration(warnMs)}`);
}

/** Redlock: instances' clocks against each other, from their offsets to this host. */
export function clockSpreadCheck(
  offsets: { label: string; offsetMs: number; uncertaintyMs: number }[],
  ttlMs: number,
): Check {
  const name = 'clock spread';
  let worst = { gap: 0, a: offsets[0], b: offsets[0] };
  for (const a of offsets) {
    for (const b of offsets) {
      const gap = Math.abs(a.offsetMs - b.offsetMs) - a.uncertaintyMs - b.uncertaintyMs;
      if (gap > worst.gap) worst = { gap, a, b };
    }
  }
  const { warnMs } = clockLimits(ttlMs);
  if (worst.gap <= warnMs)
    return ok(name, `the ${offsets.length} instances' clocks agree within ${formatDuration(warnMs)}`);
  const between = Math.abs(worst.a.offsetMs - worst.b.offsetMs);
  return {
    name,
    status: 'WARN',
    message:
      `${worst.a.label} and ${worst.b.label} differ by ${formatDuration(between)}: at least one of them is ` +
      'not synchronised, and the step that corrects it shortens the leases on it',
    fix: "synchronise the Redis hosts' clocks (chrony or ntpd, slewing rather than stepping)",
  };
}

/**
 * Round trip against the per-instance timeout dlock gives acquire and renew (`timeoutMs`,
 * from --connect-timeout and the TTL): at or past it every request times out; past a tenth of
 * it, one slow answer fails a renewal.
 */
export function rttCheck(rttMs: number, timeoutMs: number, ttlMs: number): Check {
  const name = 'round trip';
  const measured = `${rttMs < 10 ? `${rttMs.toFixed(1)}ms` : formatDuration(rttMs)} (median of 5)`;
  if (rttMs >= timeoutMs)
    return {
      name,
      status: 'FAIL',
      message:
        `${measured}: at least the ${formatDuration(timeoutMs)} dlock waits per request at a ` +
        `${formatDuration(ttlMs)} TTL, so taking and renewing locks times out`,
      fix: 'run dlock closer to Redis, or use a longer --ttl and --connect-timeout',
    };
  if (rttMs > timeoutMs / 10)
    return {
      name,
      status: 'WARN',
      message:
        `${measured}: more than a tenth of the ${formatDuration(timeoutMs)} dlock waits per request at a ` +
        `${formatDuration(ttlMs)} TTL; one slow answer fails a renewal`,
      fix: 'run dlock closer to Redis, or use a longer --ttl',
    };
  return ok(name, `${measured}, against ${formatDuration(timeoutMs)} per request at a ${formatDuration(ttlMs)} TTL`);
}
