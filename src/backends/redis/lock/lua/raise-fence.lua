-- raise-fence.lua: Redlock round 2: the counter becomes max(counter, T) while we hold the lock.
-- Prefixed with key-check.lua.
--
-- KEYS[1]  lock hash
-- KEYS[2]  fence counter
-- ARGV[1]  owner token
-- ARGV[2]  T (decimal string)
--
-- Returns 1 when the owner still matched (counter and the hash's fence are now >= T), else 0.
-- Compares decimal strings by length then digits, so counters past 2^53 stay exact.

local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
local current = redis.call('GET', KEYS[2]) or '0'
if #current < #ARGV[2] or (#current == #ARGV[2] and current < ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('HSET', KEYS[1], 'fence', ARGV[2])
return 1
