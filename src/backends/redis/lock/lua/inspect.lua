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
--
-- A reply never exceeds INSPECT_MAX_BYTES (counting each string, plus 16 bytes for each
-- element's framing): a lock that holds more than that (only forged data does) is refused with
-- the error "DLOCKTOOLARGE <bytes>", never sent. A larger reply would be cut off by the client,
-- which closes the connection (and fails every command on it) rather than read it.

local refused = check_keys({1, 'hash', 2, 'counter', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, F, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local used = 0
local function count(list)
  for _, s in ipairs(list) do used = used + 16 + #s end
  return used <= INSPECT_MAX_BYTES
end
local function too_large()
  return redis.error_reply('DLOCKTOOLARGE ' .. used)
end
local flat = redis.call('HGETALL', L)
if not count(flat) then return too_large() end
local ends = redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES')
if not count(ends) then return too_large() end
local line = {}
for _, w in ipairs(redis.call('ZRANGE', Q, 0, 999)) do
  line[#line + 1] = w
  line[#line + 1] = redis.call('ZSCORE', QX, w) or '0'
  line[#line + 1] = redis.call('HGET', QD, w) or ''
end
if not count(line) then return too_large() end
return {redis.call('PTTL', L), redis.call('GET', F), flat, ends, line, redis.call('ZCARD', Q), clock()}
