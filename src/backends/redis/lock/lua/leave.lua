-- leave.lua: a waiter gives up its place (its wait ran out, or it was signalled).
-- Prefixed with line-lib.lua.
--
-- KEYS[1]  L, lock hash
-- KEYS[2]  HX, holders' lease ends
-- KEYS[3]  Q, the line
-- KEYS[4]  QX, place lease ends
-- KEYS[5]  QD, waiters' details
-- KEYS[6]  history stream
-- KEYS[7]  totals (totals.lua)
-- ARGV[1]  owner token
-- ARGV[2]  wake channel prefix
-- ARGV[3]  what to record: "busy" (its --wait ran out), "left" (interrupted) or "" (nothing)
-- ARGV[4]  ms it waited
--
-- Returns 1 when it was in line (the waiters that may enter now are woken), else 0.

local refused = check_keys({1, 'hash', 2, 'zset', 3, 'zset', 4, 'zset', 5, 'hash'})
if refused then return refused end
local L, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if not redis.call('ZSCORE', Q, ARGV[1]) then return 0 end
if ARGV[3] ~= '' then
  local w = waiter(QD, ARGV[1])
  record(KEYS[6], KEYS[7], ARGV[3], 'host', tostring(w.host or ''), 'pid', tostring(w.pid or ''),
    'cmd', tostring(w.cmd or ''), 'waited_ms', ARGV[4], 'why', 'wait')
end
redis.call('ZREM', Q, ARGV[1])
redis.call('ZREM', QX, ARGV[1])
redis.call('HDEL', QD, ARGV[1])
local now = clock()
prune_line(Q, QX, QD, now)
prune_holders(L, HX, now)
wake(ARGV[2], entrants(L, HX, Q, QD))
return 1
