-- retake.lua: Redlock renewal only: put our lock back on an instance that lost it (e.g. restarted
-- without persistence) while a majority of the other instances still holds it for us. The caller
-- runs it only after a renewal that a majority confirmed, within its validity.
-- Prefixed with common.lua.
--
-- KEYS[1]  lock hash
-- KEYS[2]  fence counter
-- ARGV[1]  owner token
-- ARGV[2]  ttl ms (what is left of the lease the majority just renewed)
-- ARGV[3]  fencing token T we hold (decimal string)
-- ARGV[4]  host
-- ARGV[5]  pid
-- ARGV[6]  cmd
-- ARGV[7]  ms the lock has been held (on the holder's monotonic clock): the hash's `since_ms` is the
--          server's time (TIME) less this, so a holder's wrong clock never shows in status
-- ARGV[8]  the lease length (the hash's `ttl_ms`)
--
-- Returns 1 when the lock is ours there now (re-created, or it already was), 0 when the key
-- exists with another owner (never overwritten). Re-creating raises the counter to
-- max(counter, T) (decimal strings compared by length then digits), so later tokens stay above T.

local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  return 1
end
if owner or redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
raise_counter(KEYS[2], ARGV[3])
local since = tostring(clock() - math.max(0, tonumber(ARGV[7]) or 0))
local failed = write_holder(KEYS[1], ARGV[2], 'owner', ARGV[1], 'fence', ARGV[3], 'host', ARGV[4], 'pid', ARGV[5],
  'cmd', ARGV[6], 'since_ms', since, 'ttl_ms', ARGV[8])
if failed then return failed end
return 1
