-- extend.lua: renew the lease while the owner still matches; never re-creates a lock.
-- Prefixed with common.lua, HISTORY_MAX (scripts.ts) and totals.lua.
--
-- KEYS[1]  lock hash
-- KEYS[2]  history stream (scripts.ts, HISTORY)
-- KEYS[3]  totals (totals.lua)
-- ARGV[1]  owner token
-- ARGV[2]  ttl ms
-- ARGV[3]  "1" to record a loss (dlock run and the keeper on one instance), else "0"
-- ARGV[4]  host     \
-- ARGV[5]  pid       | of the holder, for the "lost" entry ("" when ARGV[3] is "0")
-- ARGV[6]  cmd       |
-- ARGV[7]  fence    /
-- ARGV[8]  --max-hold ms of the job, stored as the hash's max_hold_ms ("": leave it)
-- ARGV[9]  ms since the job's last heartbeat (on the holder's monotonic clock; "": leave beat_ms):
--          beat_ms is stored as the server's time (TIME) less this, so a holder's wrong clock never shows
--
-- Returns 1 when the owner matched and the lease was renewed, else 0 (and, with ARGV[3] "1", a
-- "lost" entry says why: expired, forced (`release --force` closed it) or taken).

local refused = check_keys({1, 'hash'})
if refused then return refused end
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[8] and ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'max_hold_ms', ARGV[8]) end
  local age = tonumber(ARGV[9])
  if age then
    local beat = clock() - math.max(0, age)
    redis.call('HSET', KEYS[1], 'beat_ms', tostring(beat))
  end
  return 1
end
if ARGV[3] == '1' then
  local why = 'expired'
  if owner == '' then why = 'forced' elseif owner then why = 'taken' end
  redis.pcall('XADD', KEYS[2], 'MAXLEN', HISTORY_MAX, '*', 'event', 'lost', 'host', ARGV[4], 'pid', ARGV[5],
    'cmd', ARGV[6], 'fence', ARGV[7], 'why', why)
  tally(KEYS[3], 'lost', 'why', why)
end
return 0
