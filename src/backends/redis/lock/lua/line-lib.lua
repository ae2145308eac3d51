-- line-lib.lua: the functions of the line, prefixed (after common.lua and HISTORY_MAX,
-- PLACE_LEASE_LIMIT_MS, INSPECT_MAX_BYTES: scripts.ts) to enter, extend-holder, leave, release,
-- inspect and force-release.
--
-- The line (one instance, a Sentinel-managed master or a Cluster): waiters served in arrival
-- order, up to n holders at once (--slots), or shared holders (--shared). Keys of one lock, all
-- with the hash tag {<key>} (see keys.ts):
--   L  lock hash: an exclusive holder (`owner`, `fence`, … as acquire.lua writes it); or, with
--      --slots n or --shared, `mode` ("slots"/"shared"), `slots` (n), per holder `h:<owner>` (JSON
--      of its fence, slot, host, pid, cmd, since_ms, ttl_ms) and per taken slot `s:<slot>` (its owner)
--   HX holders' lease ends (sorted set: owner → ms on the server's clock); --slots/--shared only
--   Q  the line (sorted set: owner → score, in the order of service: enter.lua's line_score)
--   QX each waiter's place lease end (sorted set: owner → ms); renewed while it waits
--   QD each waiter's details (hash: owner → JSON of mode, slots, host, pid, cmd, since_ms, priority, supersede);
--      and per waiter a newer --supersede waiter took the place of, `superseded:<owner>` → JSON of who did
-- Each waiter listens on its own channel <wake prefix><owner>: a release, or a waiter leaving,
-- publishes only to the waiters that may now enter. Times are the server's (TIME), so hosts'
-- clocks never matter. A holder of several slots/shared modes is never made by forged data:
-- every field read back is decoded with pcall and defaulted.
-- A key `release --force` closed (see closure) admits nobody, of any kind, until it opens.

local function decoded(raw)
  if type(raw) ~= 'string' then return {} end
  local ok, value = pcall(cjson.decode, raw)
  if ok and type(value) == 'table' then return value end
  return {}
end
-- The kinds that count their holders up to n (--slots n). A new kind is a clause here (if it counts
-- to n) or in mode_of (if it does not): the line scripts decide by these two, not by name.
local function counted(mode)
  return mode == 'slots'
end
local function mode_of(info)
  if info.mode == 'shared' or counted(info.mode) then return info.mode end
  return 'exclusive'
end
local function waiter(QD, w)
  return decoded(redis.call('HGET', QD, w))
end
local function drop_waiter(Q, QX, QD, w)
  redis.call('ZREM', Q, w)
  redis.call('ZREM', QX, w)
  redis.call('HDEL', QD, w)
end
local function prune_line(Q, QX, QD, now)
  local gone = 0
  local function drop(list)
    for _, w in ipairs(list) do drop_waiter(Q, QX, QD, w) end
    gone = gone + #list
  end
  drop(redis.call('ZRANGEBYSCORE', QX, '-inf', now))
  -- Not a waiter's: a place lease further ahead than any dlock asks for, a ticket outside
  -- 1 ... 2^52 (enter.lua's line_score keeps far inside, exact in a double), a head with no lease at all.
  drop(redis.call('ZRANGEBYSCORE', QX, '(' .. string.format('%d', now + PLACE_LEASE_LIMIT_MS), '+inf'))
  drop(redis.call('ZRANGEBYSCORE', Q, '-inf', '(1'))
  drop(redis.call('ZRANGEBYSCORE', Q, '(4503599627370496', '+inf'))
  for _ = 1, 100 do
    local head = redis.call('ZRANGE', Q, 0, 0)[1]
    if not head or redis.call('ZSCORE', QX, head) then break end
    drop({head})
  end
  return gone
end
local function drop_holder(L, HX, owner)
  local h = decoded(redis.call('HGET', L, 'h:' .. owner))
  redis.call('HDEL', L, 'h:' .. owner)
  redis.call('ZREM', HX, owner)
  if h.slot ~= nil then
    local field = 's:' .. tostring(h.slot)
    if redis.call('HGET', L, field) == owner then redis.call('HDEL', L, field) end
  end
end
local function settle_holders(L, HX, now)
  local last = redis.call('ZRANGE', HX, -1, -1, 'WITHSCORES')
  if #last == 0 then
    redis.call('DEL', L, HX)
    return
  end
  -- A forged lease end (1e300) is cut to 2^52 ms, an expiry PEXPIRE takes (it refuses 1e+300).
  local ms = string.format('%d', math.min(math.max(1, tonumber(last[2]) - now), 4503599627370496))
  redis.call('PEXPIRE', L, ms)
  redis.call('PEXPIRE', HX, ms)
end
local function prune_holders(L, HX, now)
  -- Only a hash of --slots/--shared holders: never an exclusive holder's, whatever `mode` it shows.
  if redis.call('HEXISTS', L, 'mode') == 0 or redis.call('HEXISTS', L, 'owner') == 1 then return 0 end
  local gone = redis.call('ZRANGEBYSCORE', HX, '-inf', now)
  for _, h in ipairs(gone) do drop_holder(L, HX, h) end
  if #gone > 0 or redis.call('EXISTS', HX) == 0 then settle_holders(L, HX, now) end
  return #gone
end
local function state(L, HX)
  if redis.call('EXISTS', L) == 0 then return 'none', 0, 0 end
  -- An exclusive holder's fields win over a `mode` beside them (forged, or left by an old bug).
  if redis.call('HEXISTS', L, 'owner') == 1 then return 'exclusive', 1, 1 end
  local mode = redis.call('HGET', L, 'mode')
  if mode == 'shared' then return 'shared', redis.call('ZCARD', HX), 0 end
  if counted(mode) then return mode, redis.call('ZCARD', HX), tonumber(redis.call('HGET', L, 'slots')) or 0 end
  return 'exclusive', 1, 1
end
-- How long `release --force` keeps the key closed to new holders of every kind (0: open), and how
-- many holders not closed still hold: an exclusive hash whose `owner` it blanked (its PTTL), or
-- --slots/--shared holders it renamed "!<owner>" (the latest of their lease ends). An exclusive
-- hash with an owner, or a blank one without an expiry (not dlock's), is a holder, not a closure.
local function closure(L, HX, now)
  local owner = redis.call('HGET', L, 'owner')
  if owner then
    local left = redis.call('PTTL', L)
    if owner == '' and left > 0 then return left, 0 end
    return 0, 1
  end
  if redis.call('HEXISTS', L, 'mode') == 0 then return 0, 0 end
  local ends, live = now, 0
  local scored = redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES')
  for i = 1, #scored, 2 do
    if string.sub(scored[i], 1, 1) == '!' then ends = math.max(ends, tonumber(scored[i + 1]) or now)
    else live = live + 1 end
  end
  return math.min(ends - now, 4503599627370496), live
end
local function entrants(L, HX, Q, QD)
  local kind, count, n = state(L, HX)
  if kind == 'exclusive' then return {} end
  -- Closed by release --force: nobody enters, of any kind, until it opens.
  if kind ~= 'none' and closure(L, HX, clock()) > 0 then return {} end
  local head = redis.call('ZRANGE', Q, 0, 0)[1]
  if not head then return {} end
  local info = waiter(QD, head)
  local mode = mode_of(info)
  if counted(mode) then
    if kind ~= 'none' and kind ~= mode then return {} end
    if kind == 'none' then n = tonumber(info.slots) or 1 end
    if n - count <= 0 then return {} end
    return redis.call('ZRANGE', Q, 0, n - count - 1)
  end
  if counted(kind) then return {} end
  if mode == 'exclusive' then
    if kind == 'none' then return {head} end
    return {}
  end
  local run = {}
  for _, w in ipairs(redis.call('ZRANGE', Q, 0, LINE_SCAN_MAX - 1)) do
    if mode_of(waiter(QD, w)) ~= 'shared' then break end
    run[#run + 1] = w
  end
  return run
end
local function record(H, T, event, ...)
  redis.pcall('XADD', H, 'MAXLEN', HISTORY_MAX, '*', 'event', event, ...)
  tally(T, event, ...)
end
local function wake(prefix, who)
  local told = true
  for _, w in ipairs(who) do
    local sent = redis.pcall('PUBLISH', prefix .. w, 'go')
    if type(sent) == 'table' and sent.err then told = false end
  end
  return told
end
