-- force-release.lua: the operator's escape hatch (`release --force`): no owner check.
-- Prefixed with line-lib.lua.
--
-- KEYS[1]  L, lock hash
-- KEYS[2]  release channel
-- KEYS[3]  HX, holders' lease ends
-- KEYS[4]  Q, the line
-- KEYS[5]  QX, place lease ends
-- KEYS[6]  QD, waiters' details
-- KEYS[7]  history stream
-- KEYS[8]  totals (totals.lua)
-- ARGV[1]  "now" to delete at once, else "close"
-- ARGV[2]  a slot number to remove only that holder of --slots, "" for every holder
-- ARGV[3]  wake channel prefix
-- ARGV[4]  host of who forces it  \ each removed holder gets a "forced" entry
-- ARGV[5]  pid of who forces it   /
-- ARGV[6]  the place lease ms waiters renew (a place whose lease ends further ahead is not a live
--          waiter's: dropped from the line, as are the places prune_line drops)
--
-- Returns {ms the key stays closed (0: deleted, or nothing to release), flat HGETALL of the
-- exclusive holder as it was (empty if none), the removed holders of --slots/--shared as their
-- details JSON, the server's time in ms (what the holders' ages count to)}.
-- A closed hold's `forced_ms` is the server's time.
-- "close" keeps each removed hold closed to new holders until its lease runs out: an exclusive
-- hash's `owner` becomes "" (no token matches it, so that holder's next renewal is refused and
-- its dlock stops its command); a --slots/--shared holder is renamed "!<owner>" (its slot stays
-- taken, its renewal is refused). While any hold is closed, the key admits no new holder of any
-- kind (line-lib's closure). A hold closed before is listed again (its details carry forced_ms):
-- "close" leaves it closed, "now" removes it too. A hash without an expiry (not one dlock wrote)
-- is deleted: it would stay closed forever; so is a hold (`dlock hold`): no process holds it, none is to be
-- stopped. "now" deletes and wakes the waiters that may now enter.

local refused = check_keys({1, 'hash', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, R, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local function woken()
  redis.call('PUBLISH', R, 'force')
  if redis.call('EXISTS', Q) == 1 then wake(ARGV[3], entrants(L, HX, Q, QD)) end
end
-- The line too: places that are not a live waiter's (see prune_line, and any lease further ahead
-- than a waiter renews it) are dropped, and whoever may now enter is told.
local now = clock()
local dropped = prune_line(Q, QX, QD, now)
local ahead = redis.call('ZRANGEBYSCORE', QX, '(' .. string.format('%d', now + (tonumber(ARGV[6]) or 5000)), '+inf')
for _, w in ipairs(ahead) do drop_waiter(Q, QX, QD, w) end
if dropped + #ahead > 0 and redis.call('EXISTS', Q) == 1 then wake(ARGV[3], entrants(L, HX, Q, QD)) end
if redis.call('HEXISTS', L, 'mode') == 0 or redis.call('HEXISTS', L, 'owner') == 1 then
  local holder = redis.call('HGETALL', L)
  local pttl = redis.call('PTTL', L)
  if #holder == 0 then return {0, holder, {}, now} end
  local h = {}
  for i = 1, #holder, 2 do h[holder[i]] = holder[i + 1] end
  record(KEYS[7], KEYS[8], 'forced', 'host', h.host or '', 'pid', h.pid or '', 'cmd', h.cmd or '',
    'fence', h.fence or '', 'slot', '-1', 'by_host', ARGV[4], 'by_pid', ARGV[5], 'now', tostring(ARGV[1] == 'now'))
  -- A hold (`dlock hold`, field `hold`) has no process to stop: removed at once, never kept closed.
  if ARGV[1] ~= 'now' and pttl > 0 and h.hold ~= '1' then
    redis.call('HSET', L, 'owner', '', 'forced_ms', tostring(now))
    return {pttl, holder, {}, now}
  end
  redis.call('DEL', L)
  woken()
  return {0, holder, {}, now}
end
prune_holders(L, HX, now)
local scored = redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES')
local list, closed = {}, 0
for i = 1, #scored, 2 do
  local owner, ends = scored[i], tonumber(scored[i + 1])
  local raw = redis.call('HGET', L, 'h:' .. owner)
  local h = decoded(raw)
  if ARGV[2] == '' or tostring(h.slot) == ARGV[2] then
    list[#list + 1] = raw or '{}'
    record(KEYS[7], KEYS[8], 'forced', 'host', tostring(h.host or ''), 'pid', tostring(h.pid or ''),
      'cmd', tostring(h.cmd or ''), 'fence', tostring(h.fence or ''), 'slot', tostring(h.slot or '-1'),
      'by_host', ARGV[4], 'by_pid', ARGV[5], 'now', tostring(ARGV[1] == 'now'))
    if string.sub(owner, 1, 1) == '!' then
      -- Closed before: listed as it is (its details say forced_ms), kept closed, or removed by "now".
      if ARGV[1] == 'now' then drop_holder(L, HX, owner)
      else closed = math.max(closed, math.min(ends - now, 4503599627370496)) end
    elseif ARGV[1] ~= 'now' then
      drop_holder(L, HX, owner)
      h.forced_ms = tostring(now)
      redis.call('HSET', L, 'h:!' .. owner, cjson.encode(h))
      if h.slot ~= nil and tostring(h.slot) ~= '-1' then
        redis.call('HSET', L, 's:' .. tostring(h.slot), '!' .. owner)
      end
      redis.call('ZADD', HX, ends, '!' .. owner)
      closed = math.max(closed, math.min(ends - now, 4503599627370496))
    else
      drop_holder(L, HX, owner)
    end
  end
end
settle_holders(L, HX, now)
if ARGV[1] == 'now' and #list > 0 then woken() end
return {closed, {}, list, now}
