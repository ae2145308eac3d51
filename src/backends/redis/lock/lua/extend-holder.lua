-- extend-holder.lua: renew one holder of --slots or --shared; never re-creates one.
-- Prefixed with line-lib.lua.
--
-- KEYS[1]  L, lock hash
-- KEYS[2]  HX, holders' lease ends
-- KEYS[3]  history stream
-- KEYS[4]  totals (totals.lua)
-- ARGV[1]  owner token
-- ARGV[2]  ttl ms
-- ARGV[3..7] as extend.lua's (record a loss: "1", host, pid, cmd, fence)
-- ARGV[8..9] as extend.lua's (max_hold_ms, ms since the last heartbeat: stored in the holder's details
--            as max_hold_ms and beat_ms, the server's time less that age; "": leave it)
--
-- Returns 1 when it still held (its lease now ends ttl from now), else 0 (and with ARGV[3] "1" a
-- "lost" entry: expired, or forced).

local refused = check_keys({1, 'hash', 2, 'zset'})
if refused then return refused end
local L, HX = KEYS[1], KEYS[2]
local now = clock()
local ends = redis.call('ZSCORE', HX, ARGV[1])
if redis.call('HEXISTS', L, 'h:' .. ARGV[1]) == 0 or not ends or tonumber(ends) <= now then
  if ARGV[3] == '1' then
    local why = 'expired'
    if redis.call('HEXISTS', L, 'h:!' .. ARGV[1]) == 1 then why = 'forced' end
    record(KEYS[3], KEYS[4], 'lost', 'host', ARGV[4], 'pid', ARGV[5], 'cmd', ARGV[6], 'fence', ARGV[7], 'why', why)
  end
  return 0
end
redis.call('ZADD', HX, now + tonumber(ARGV[2]), ARGV[1])
if (ARGV[8] and ARGV[8] ~= '') or (ARGV[9] and ARGV[9] ~= '') then
  local details = decoded(redis.call('HGET', L, 'h:' .. ARGV[1]))
  if ARGV[8] ~= '' then details.max_hold_ms = ARGV[8] end
  if tonumber(ARGV[9]) then details.beat_ms = tostring(now - math.max(0, tonumber(ARGV[9]))) end
  redis.call('HSET', L, 'h:' .. ARGV[1], cjson.encode(details))
end
settle_holders(L, HX, now)
return 1
