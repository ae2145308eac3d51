-- inspect.lua: a lock's whole state on one instance, read only. Prefixed with line-lib.lua.
--
-- KEYS[1]  L, lock hash
-- KEYS[2]  fence counter
-- KEYS[3]  HX, holders' lease ends
-- KEYS[4]  Q, the line
-- KEYS[5]  QX, place lease ends
-- KEYS[6]  QD, waiters' details
--
-- Returns {PTTL of L, fence counter or false, flat HGETALL of L, flat ZRANGE HX WITHSCORES
-- (owner, lease end ms), the line as a flat list (owner, place lease end ms, details JSON) of at
-- most its first 1000 waiters, its length, the server's time in ms}.

local refused = check_keys({1, 'hash', 2, 'counter', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, F, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local line = {}
for _, w in ipairs(redis.call('ZRANGE', Q, 0, 999)) do
  line[#line + 1] = w
  line[#line + 1] = redis.call('ZSCORE', QX, w) or '0'
  line[#line + 1] = redis.call('HGET', QD, w) or ''
end
return {redis.call('PTTL', L), redis.call('GET', F), redis.call('HGETALL', L),
  redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES'), line, redis.call('ZCARD', Q), clock()}
