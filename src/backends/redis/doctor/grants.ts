// The ACL grants dlock needs, per feature, checked without running any of them: Redis 7's
// redis.acl_check_cmd() in one EVAL answers "may this user run this command on these keys
// and channels?" for each. The table is docs/operations/tls-and-acl.md (least privilege) as data.

import type { Redis } from 'ioredis';
import { scriptCommands } from '../lock/all-scripts.js';
import { lockKeys, type LockKeys } from '../lock/keys.js';
import type { Check } from './checks.js';

interface Grant {
  /** The command and its arguments as dlock sends them (keys and channels included). */
  argv: (keys: LockKeys) => string[];
  /** What to add: the command and, when it touches one, the key or channel pattern. */
  grant: string;
  feature: string;
  /** Missing it fails the feature (FAIL) or only slows it down (WARN). */
  missing: 'FAIL' | 'WARN';
  /** Only asked about when it applies to this configuration. */
  when?: (context: GrantContext) => boolean;
  /** A command the lock scripts call: asked about while one of them declares it (lock/all-scripts.ts). */
  called?: true;
}

export interface GrantContext {
  prefix: string;
  db: number;
  /** More than one --redis URL (Redlock). */
  redlock: boolean;
}

const LOCKS = 'dlock run, acquire, renew and release (the lock scripts)';
const SHA = '0000000000000000000000000000000000000000';
const EXAMPLE = lockKeys('', '');

/** A command the lock scripts call, needed to lock at all; asked about on a key of ours unless `grant` says not. */
function called(argv: (keys: LockKeys) => string[], grant = `+${argv(EXAMPLE)[0]} ~PREFIX*`): Grant {
  return { argv, grant, feature: LOCKS, missing: 'FAIL', called: true };
}

/**
 * How the doctor asks about each command, in the order it reports them. The commands the lock
 * scripts call (`called`) come from the scripts' declarations: one no script declares is not
 * asked about, and one a script declares that is not here is asked about on the lock's hash, as
 * part of the lock scripts, after the rest (grantsAsked).
 */
const GRANTS: Grant[] = [
  { argv: (k) => ['evalsha', SHA, '2', k.lock, k.fence], grant: '+evalsha', feature: LOCKS, missing: 'FAIL' },
  { argv: (k) => ['eval', 'return 1', '2', k.lock, k.fence], grant: '+eval', feature: LOCKS, missing: 'FAIL' },
  called((k) => ['hget', k.lock, 'owner']),
  called((k) => ['hset', k.lock, 'owner', 'x']),
  called((k) => ['exists', k.lock]),
  called((k) => ['pttl', k.lock]),
  called((k) => ['pexpire', k.lock, '1000']),
  called((k) => ['del', k.lock]),
  called((k) => ['incr', k.fence]),
  called((k) => ['get', k.fence]),
  // The line (one instance) and --slots/--shared: every acquire reads it and the server's clock.
  called(() => ['time'], '+time'),
  called((k) => ['hexists', k.lock, 'mode']),
  called((k) => ['hdel', k.lineInfo, 'x']),
  called((k) => ['zadd', k.line, '1', 'x']),
  called((k) => ['zrem', k.line, 'x']),
  called((k) => ['zrange', k.line, '0', '0']),
  called((k) => ['zrangebyscore', k.lineExpiry, '-inf', '0']),
  called((k) => ['zscore', k.line, 'x']),
  called((k) => ['zrank', k.line, 'x']),
  called((k) => ['zrevrangebyscore', k.line, '0', '0', 'LIMIT', '0', '1']),
  called((k) => ['zcard', k.line]),
  {
    argv: (k) => ['hgetall', k.lock],
    grant: '+hgetall ~PREFIX*',
    feature: 'dlock status, release --force and the holder shown while waiting',
    missing: 'FAIL',
    called: true,
  },
  {
    argv: () => ['scan', '0'],
    grant: '+scan',
    feature: 'dlock status without a key (the list of held locks)',
    missing: 'FAIL',
  },
  {
    argv: (k) => ['set', k.fence, '1'],
    grant: '+set ~PREFIX*',
    feature: 'Redlock (raising the fence counters to the largest)',
    missing: 'FAIL',
    when: (c) => c.redlock,
    called: true,
  },
  {
    argv: (k) => ['set', `${k.lock}:done`, '1'],
    grant: '+set ~PREFIX*',
    feature: '--once-per (marking a key done after a run that succeeded)',
    missing: 'WARN',
    when: (c) => !c.redlock,
    called: true,
  },
  {
    argv: (k) => ['xadd', `${k.lock}:history`, '*', 'event', 'x'],
    grant: '+xadd ~PREFIX*',
    feature: 'the history of each lock (without it nothing is recorded; locking works)',
    missing: 'WARN',
    called: true,
  },
  {
    argv: (k) => ['hincrby', `${k.lock}:totals`, 'x', '1'],
    grant: '+hincrby ~PREFIX*',
    feature: 'the counts dlock metrics reports (without it nothing is counted; locking works)',
    missing: 'WARN',
    called: true,
  },
  {
    argv: (k) => ['hmget', `${k.lock}:totals`, 'x'],
    grant: '+hmget ~PREFIX*',
    feature: "dlock metrics' counters",
    missing: 'WARN',
  },
  {
    argv: (k) => ['xrevrange', `${k.lock}:history`, '+', '-'],
    grant: '+xrevrange ~PREFIX*',
    feature: "dlock history and the waiting spinner's estimate",
    missing: 'WARN',
  },
  {
    argv: () => ['select', '1'],
    grant: '+select',
    feature: 'a database number other than 0 in the URL',
    missing: 'FAIL',
    when: (c) => c.db !== 0,
  },
  {
    argv: (k) => ['subscribe', `${k.wakePrefix}x`],
    grant: '+subscribe &PREFIX*',
    feature: 'waiting: hearing a release at once (without it waiters poll, a release is noticed up to 5s later)',
    missing: 'WARN',
  },
  {
    argv: (k) => ['publish', `${k.wakePrefix}x`, 'x'],
    grant: '+publish &PREFIX*',
    feature: 'release: telling waiters at once (without it they notice by polling, up to 5s later)',
    missing: 'WARN',
    called: true,
  },
  { argv: () => ['wait', '0', '0'], grant: '+wait', feature: '--sync-replicas', missing: 'WARN' },
];

/** GRANTS, with the commands the lock scripts call as they declare them (see GRANTS). */
function grantsAsked(): Grant[] {
  const declared = scriptCommands().map((command) => command.toLowerCase());
  const commandOf = (grant: Grant) => grant.argv(EXAMPLE)[0];
  const listed = new Set(GRANTS.filter((grant) => grant.called).map(commandOf));
  const unlisted = declared.filter((command) => !listed.has(command));
  return [
    ...GRANTS.filter((grant) => !grant.called || declared.includes(commandOf(grant))),
    ...unlisted.map((command) => called((k) => [command, k.lock])),
  ];
}

/**
 * ARGV: groups of <n> <command> <args...> (n words each); returns 1 or 0 per group: whether
 * the user running the script may run that command on those keys and channels.
 */
const ACL_CHECK = `
local allowed, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  allowed[#allowed + 1] = redis.acl_check_cmd(unpack(ARGV, i + 1, i + n)) and 1 or 0
  i = i + n + 1
end
return allowed
`;

/** One check per missing grant, or one OK; `user` names the ACL user in the fixes. */
export async function grantChecks(node: Redis, context: GrantContext, user: string): Promise<Check[]> {
  const names = lockKeys(context.prefix, 'dlock-doctor');
  const asked = grantsAsked().filter((grant) => grant.when?.(context) ?? true);
  const argv = asked.flatMap((grant) => {
    const words = grant.argv(names);
    return [String(words.length), ...words];
  });
  const reply = (await node.eval(ACL_CHECK, 0, ...argv)) as unknown;
  if (!Array.isArray(reply) || reply.length !== asked.length)
    throw new Error('the ACL check script answered something else than one flag per command');
  const missing = asked.filter((_, i) => reply[i] !== 1);
  if (missing.length === 0)
    return [
      {
        name: 'acl',
        status: 'OK',
        message: `user ${user} may run everything dlock does${context.redlock ? ' (Redlock included)' : ''}`,
        fix: '',
      },
    ];
  const pattern = context.prefix.replace(/[*?[\]\\]/g, '\\$&');
  return missing.map((grant) => {
    const add = grant.grant.replace(/PREFIX/g, pattern);
    return {
      name: `acl ${add.split(' ')[0]}`,
      status: grant.missing,
      message:
        `user ${user} may not run ` +
        `${grant.argv(names)[0].toUpperCase()}${add.includes(' ') ? ` on ${context.prefix}*` : ''}, needed for ` +
        `${grant.feature}`,
      fix: `ACL SETUSER ${user} ${add}`,
    };
  });
}

/** Redis 7 answers the ACL check; 6 has ACLs but no way to check them without running the commands. */
export function grantsUncheckable(version: string | undefined): string | undefined {
  if (version === undefined) return 'not checked: the server version is unknown';
  const major = Number(version.split('.')[0]);
  if (!(major >= 6)) return 'no ACLs before Redis 6';
  if (major < 7) {
    return (
      'Redis 6 cannot check grants without running the commands (7 has redis.acl_check_cmd): ' +
      'compare the user with docs/operations/tls-and-acl.md'
    );
  }
  return undefined;
}
