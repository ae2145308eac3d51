-- release.lua: compare-and-delete our hold, then wake the waiters that may now enter.
-- Prefixed with line-lib.lua.
--
-- KEYS[1]  L, lock hash
-- KEYS[2]  release channel
-- KEYS[3]  HX, holders' lease ends
-- KEYS[4]  Q, the line
-- KEYS[5]  QX, place lease ends
-- KEYS[6]  QD, waiters' details
-- KEYS[7]  done mark (--once-per)
-- KEYS[8]  history stream
-- KEYS[9]  totals (totals.lua)
-- ARGV[1]  owner token
-- ARGV[2]  "0" to delete without telling the waiters (undoing a Redlock attempt that never held a
--          quorum), else "1"
-- ARGV[3]  wake channel prefix
-- ARGV[4]  "1" to record the release (history, once-per), else "0"
-- ARGV[5]  the run's exit status ("" when no command ran)
-- ARGV[6]  --once-per window ms ("0": none)
-- ARGV[7]  why dlock ended the job ("max-hold", "heartbeat-missed"; "": it was not ended by dlock),
--          recorded as the entry's `reason`
-- ARGV[8]  the command's own status when dlock ended it ("143" after SIGTERM; "": not known, or not
--          ended by dlock), recorded as the entry's `command_exit` (`exit` is then dlock's 124)
-- ARGV[9]  the owner's fence ("": not known), to tell its hold closed by `release --force`
-- ARGV[10] who ends it, for `dlock unhold` (JSON of strings; "" or "{}": the owner itself): `by_user`,
--          `by_host`, and `forced` ("1": unhold --force by another user, recorded as `forced` with by_user,
--          by_host, instead of `released`)
--
-- Returns 1 when the owner held it (the exclusive hash, or one holder of --slots/--shared) and
-- its hold is deleted, the waiters that may now enter woken (unless ARGV[2] is "0"); 2 when it
-- was deleted but a PUBLISH was refused (an ACL without +publish: waiters notice by polling);
-- 3 when it is not ours because `release --force` closed our hold (the exclusive hash's owner ""
-- with our fence, or our --slots/--shared hold renamed "!<owner>"): nothing is deleted; else 0.
-- With exit status "0" and a window, the done mark (JSON: host, pid, cmd, fence,
-- started_ms, finished_ms) is SET first, to expire at `taken_ms` + window (server time), unless
-- that has passed. The writes come first, so an error reply means nothing was deleted.

local refused = check_keys({1, 'hash', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, R, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local D, H = KEYS[7], KEYS[8]
local held, exclusive
if redis.call('HGET', L, 'owner') == ARGV[1] then
  exclusive = true
  held = {}
  for _, f in ipairs({'host', 'pid', 'cmd', 'fence', 'taken_ms', 'reason', 'user'}) do
    held[f] = redis.call('HGET', L, f) or ''
  end
  held.slot = '-1'
elseif redis.call('HEXISTS', L, 'h:' .. ARGV[1]) == 1 then
  held = decoded(redis.call('HGET', L, 'h:' .. ARGV[1]))
elseif redis.call('HEXISTS', L, 'h:!' .. ARGV[1]) == 1 then
  return 3
elseif ARGV[9] and ARGV[9] ~= '' and redis.call('HGET', L, 'owner') == ''
    and redis.call('HGET', L, 'fence') == ARGV[9] then
  return 3
else
  return 0
end
local now = clock()
local started = tonumber(held.taken_ms)
local window = tonumber(ARGV[6]) or 0
if ARGV[5] == '0' and window > 0 and started and started + window > now then
  redis.call('SET', D, cjson.encode({host = tostring(held.host or ''), pid = tostring(held.pid or ''),
    cmd = tostring(held.cmd or ''), fence = tostring(held.fence or ''), started_ms = tostring(started),
    finished_ms = tostring(now)}), 'PX', started + window - now)
end
if exclusive and redis.call('HEXISTS', L, 'mode') == 1 then
  -- Holders of --slots/--shared beside our fields (forged data): remove only ours.
  redis.call('HDEL', L, 'owner', 'fence', 'host', 'pid', 'cmd', 'since_ms', 'ttl_ms', 'taken_ms', 'forced_ms',
    'max_hold_ms', 'beat_ms', 'reason', 'user', 'hold', 'until_ms')
  settle_holders(L, HX, now)
elseif exclusive then
  redis.call('DEL', L)
else
  drop_holder(L, HX, ARGV[1])
  settle_holders(L, HX, now)
end
local by = {}
if ARGV[10] and ARGV[10] ~= '' then by = decoded(ARGV[10]) end
local function by_fields(fields)
  for _, f in ipairs({'by_user', 'by_host'}) do
    if type(by[f]) == 'string' then
      table.insert(fields, f)
      table.insert(fields, by[f])
    end
  end
  return fields
end
if ARGV[4] == '1' and by.forced == '1' then
  record(H, KEYS[9], 'forced', unpack(by_fields({'host', tostring(held.host or ''), 'pid', tostring(held.pid or ''),
    'cmd', tostring(held.cmd or ''), 'fence', tostring(held.fence or ''), 'slot', tostring(held.slot or '-1'),
    'user', tostring(held.user or ''), 'now', 'true'})))
elseif ARGV[4] == '1' then
  local ms = ''
  if started then ms = tostring(now - started) end
  local fields = {'host', tostring(held.host or ''), 'pid', tostring(held.pid or ''),
    'cmd', tostring(held.cmd or ''), 'fence', tostring(held.fence or ''), 'slot', tostring(held.slot or '-1'),
    'exit', ARGV[5], 'held_ms', ms}
  if ARGV[7] and ARGV[7] ~= '' then
    table.insert(fields, 'reason')
    table.insert(fields, ARGV[7])
  end
  if ARGV[8] and ARGV[8] ~= '' then
    table.insert(fields, 'command_exit')
    table.insert(fields, ARGV[8])
  end
  if held.user and held.user ~= '' then
    table.insert(fields, 'user')
    table.insert(fields, tostring(held.user))
  end
  record(H, KEYS[9], 'released', unpack(by_fields(fields)))
end
if ARGV[2] == '0' then return 1 end
local told = true
if redis.call('EXISTS', Q) == 1 then
  local now = clock()
  prune_line(Q, QX, QD, now)
  prune_holders(L, HX, now)
  told = wake(ARGV[3], entrants(L, HX, Q, QD))
end
local published = redis.pcall('PUBLISH', R, ARGV[1])
if not told or (type(published) == 'table' and published.err) then return 2 end
return 1
