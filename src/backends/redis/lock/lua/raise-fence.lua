-- raise-fence.lua: Redlock round 2: the counter becomes max(counter, T) while we hold the lock.
-- Prefixed with common.lua.
--
-- KEYS[1]  lock hash
-- KEYS[2]  fence counter
-- ARGV[1]  owner token
-- ARGV[2]  T (decimal string)
--
-- Returns 1 when the owner still matched (counter and the hash's fence are now >= T), else 0.
-- Counters past 2^53 stay exact (raise_counter, common.lua).

local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
raise_counter(KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'fence', ARGV[2])
return 1
