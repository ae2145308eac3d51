-- acquire.lua: take a free lock (exclusive; Redlock's per-instance step). Prefixed with common.lua.
--
-- KEYS[1]  lock hash
-- KEYS[2]  fence counter
-- ARGV[1]  owner token
-- ARGV[2]  ttl ms
-- ARGV[3]  host
-- ARGV[4]  pid
-- ARGV[5]  cmd
--
-- The hash's `since_ms` is the server's time (TIME): a holder's wrong clock never shows in status.
--
-- Returns {1, fence} when acquired (or already ours: a retried request that landed late),
-- else {0, remaining PTTL in ms, holder's owner token or ""}.

local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, redis.call('HGET', KEYS[1], 'fence')}
end
if owner or redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('PTTL', KEYS[1]), owner or ''}
end
local since = tostring(clock())
redis.call('INCR', KEYS[2])
local fence = redis.call('GET', KEYS[2])
local failed = write_holder(KEYS[1], ARGV[2], 'owner', ARGV[1], 'fence', fence, 'host', ARGV[3], 'pid', ARGV[4],
  'cmd', ARGV[5], 'since_ms', since, 'ttl_ms', ARGV[2])
if failed then return failed end
return {1, fence}
