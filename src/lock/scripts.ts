// The Lua scripts. Each takes every key it touches in KEYS (Cluster-safe), compares the
// owner token before it writes, and returns counters as strings (64-bit safe).

/**
 * ACQUIRE
 * KEYS[1] lock hash, KEYS[2] fence counter
 * ARGV[1] owner token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid, ARGV[5] cmd, ARGV[6] since ms
 * Returns {1, fence} when acquired (or already ours: a retried request that landed late),
 * else {0, remaining PTTL in ms, holder's owner token or ""}.
 */
export const ACQUIRE = `
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, redis.call('HGET', KEYS[1], 'fence')}
end
if owner or redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('PTTL', KEYS[1]), owner or ''}
end
redis.call('INCR', KEYS[2])
local fence = redis.call('GET', KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', fence, 'host', ARGV[3], 'pid', ARGV[4],
  'cmd', ARGV[5], 'since_ms', ARGV[6], 'ttl_ms', ARGV[2])
-- A script stopped half-way keeps its writes: never leave a lock without an expiry behind
-- (e.g. an ACL that denies PEXPIRE). Undo the hash and pass the error on.
local expired = redis.pcall('PEXPIRE', KEYS[1], ARGV[2])
if type(expired) == 'table' and expired.err then
  redis.pcall('DEL', KEYS[1])
  return expired
end
return {1, fence}
`;

/**
 * EXTEND
 * KEYS[1] lock hash; ARGV[1] owner token, ARGV[2] ttl ms
 * Returns 1 when the owner matched and the lease was renewed, else 0. Never re-creates a lock.
 */
export const EXTEND = `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/**
 * RETAKE (Redlock renewal only: put our lock back on an instance that lost it, e.g. restarted
 * without persistence, while a majority of the other instances still holds it for us)
 * KEYS[1] lock hash, KEYS[2] fence counter
 * ARGV[1] owner token, ARGV[2] ttl ms (what is left of the lease the majority just renewed),
 * ARGV[3] fencing token T we hold (decimal string), ARGV[4] host, ARGV[5] pid, ARGV[6] cmd,
 * ARGV[7] since ms, ARGV[8] the lease length (the hash's `ttl_ms`)
 * Returns 1 when the lock is ours there now (re-created, or it already was), 0 when the key
 * exists with another owner (never overwritten). Re-creating raises the counter to
 * max(counter, T) (decimal strings compared by length then digits), so later tokens stay above
 * T. The caller runs it only after a renewal that a majority confirmed, within its validity.
 */
export const RETAKE = `
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  return 1
end
if owner or redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local current = redis.call('GET', KEYS[2]) or '0'
if #current < #ARGV[3] or (#current == #ARGV[3] and current < ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[3])
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', ARGV[3], 'host', ARGV[4], 'pid', ARGV[5],
  'cmd', ARGV[6], 'since_ms', ARGV[7], 'ttl_ms', ARGV[8])
local expired = redis.pcall('PEXPIRE', KEYS[1], ARGV[2])
if type(expired) == 'table' and expired.err then
  redis.pcall('DEL', KEYS[1])
  return expired
end
return 1
`;

/**
 * RELEASE
 * KEYS[1] lock hash, KEYS[2] release channel; ARGV[1] owner token, ARGV[2] "0" to delete
 * without telling the waiters (undoing a Redlock attempt that never held a quorum)
 * Returns 1 when the owner matched and the lock was deleted (waiters told unless ARGV[2] is "0");
 * 2 when it was deleted but the PUBLISH was refused (an ACL without +publish: waiters notice by
 * polling); else 0. The DEL is done first, so an error reply means nothing was deleted.
 */
export const RELEASE = `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '0' then
    local published = redis.pcall('PUBLISH', KEYS[2], ARGV[1])
    if type(published) == 'table' and published.err then
      return 2
    end
  end
  return 1
end
return 0
`;

/**
 * RAISE_FENCE (Redlock round 2: the counter becomes max(counter, T))
 * KEYS[1] lock hash, KEYS[2] fence counter; ARGV[1] owner token, ARGV[2] T (decimal string)
 * Returns 1 when the owner still matched (counter and the hash's fence are now >= T), else 0.
 * Compares decimal strings by length then digits, so counters past 2^53 stay exact.
 */
export const RAISE_FENCE = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
local current = redis.call('GET', KEYS[2]) or '0'
if #current < #ARGV[2] or (#current == #ARGV[2] and current < ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('HSET', KEYS[1], 'fence', ARGV[2])
return 1
`;

/**
 * INSPECT
 * KEYS[1] lock hash, KEYS[2] fence counter
 * Returns {PTTL, fence counter or false, flat HGETALL of the holder}.
 */
export const INSPECT = `
return {redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('HGETALL', KEYS[1])}
`;

/**
 * FORCE_RELEASE (operator escape hatch: no owner check)
 * KEYS[1] lock hash, KEYS[2] release channel; ARGV[1] "now" to delete at once, else "close";
 * ARGV[2] the time in ms (the `forced_ms` field)
 * Returns {ms the key stays closed (0: deleted, or nothing to release), flat HGETALL of the
 * holder as it was (empty when the lock was free)}.
 * "close" keeps the key closed to new holders until the removed holder's lease runs out: its
 * `owner` becomes "" (no token matches it, so that holder's next renewal is refused and its
 * dlock stops its command), the hash keeps its PTTL and its fields for `status`. A hash
 * without an expiry (not one dlock wrote) is deleted: it would stay closed forever.
 */
export const FORCE_RELEASE = `
local holder = redis.call('HGETALL', KEYS[1])
local pttl = redis.call('PTTL', KEYS[1])
if #holder == 0 then
  return {0, holder}
end
if ARGV[1] ~= 'now' and pttl > 0 then
  redis.call('HSET', KEYS[1], 'owner', '', 'forced_ms', ARGV[2])
  return {pttl, holder}
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], 'force')
return {0, holder}
`;
