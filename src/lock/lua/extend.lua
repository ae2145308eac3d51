-- extend.lua: renew the lease while the owner still matches; never re-creates a lock.
-- Prefixed with key-check.lua and HISTORY_MAX (scripts.ts).
--
-- KEYS[1]  lock hash
-- KEYS[2]  history stream (scripts.ts, HISTORY)
-- ARGV[1]  owner token
-- ARGV[2]  ttl ms
-- ARGV[3]  "1" to record a loss (dlock run and the keeper on one instance), else "0"
-- ARGV[4]  host     \
-- ARGV[5]  pid       | of the holder, for the "lost" entry ("" when ARGV[3] is "0")
-- ARGV[6]  cmd       |
-- ARGV[7]  fence    /
--
-- Returns 1 when the owner matched and the lease was renewed, else 0 (and, with ARGV[3] "1", a
-- "lost" entry says why: expired, forced (`release --force` closed it) or taken).

local refused = check_keys({1, 'hash'})
if refused then return refused end
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if ARGV[3] == '1' then
  local why = 'expired'
  if owner == '' then why = 'forced' elseif owner then why = 'taken' end
  redis.pcall('XADD', KEYS[2], 'MAXLEN', HISTORY_MAX, '*', 'event', 'lost', 'host', ARGV[4], 'pid', ARGV[5],
    'cmd', ARGV[6], 'fence', ARGV[7], 'why', why)
end
return 0
