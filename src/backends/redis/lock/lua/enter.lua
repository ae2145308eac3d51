-- enter.lua: one instance: take the lock in line order, or keep a place in line.
-- Prefixed with line-lib.lua.
--
-- KEYS[1]  L, lock hash
-- KEYS[2]  fence counter
-- KEYS[3]  HX, holders' lease ends
-- KEYS[4]  Q, the line
-- KEYS[5]  QX, place lease ends
-- KEYS[6]  QD, waiters' details
-- KEYS[7]  done mark (--once-per)
-- KEYS[8]  history stream
-- KEYS[9]  totals (totals.lua)
-- KEYS[10] S, --supersede's register (hash: `seq`, the last ticket given; `by`, JSON of who took it: host,
--          pid, cmd, at_ms); never expires, as the fence counter
-- ARGV[1]  owner token
-- ARGV[2]  ttl ms
-- ARGV[3]  host
-- ARGV[4]  pid
-- ARGV[5]  cmd
-- ARGV[6]  mode: "exclusive" | "shared" | "slots"
-- ARGV[7]  n (slots; 1 otherwise)
-- ARGV[8]  "1" to wait in line, "0" for --no-wait (never queues: busy when the lock has no room or
--          anyone is in line)
-- ARGV[9]  place lease ms
-- ARGV[10] wake channel prefix
-- ARGV[11] ms this dlock has waited so far (history)
-- ARGV[12] --once-per window ms ("0": none)
-- ARGV[13] the holder's extras (JSON of strings, "" or "{}": none): `reason` (--reason), `user` (the OS
--          user), `hold` ("1": `dlock hold`, a holder with no process) and `forever` ("1": a hold without an
--          end, until `dlock unhold`: its hash is written without an expiry, and a late retry sets none), or
--          `until_ms` (a hold's end as ms since the epoch: its lease is cut to end then on the server's
--          clock). reason, user and hold are stored in the exclusive holder's hash, the h:<owner> JSON and the
--          waiter's QD JSON, and in the `acquired` history entry; a hold's hash also gets `until_ms` (server
--          time; "" when forever).
-- ARGV[14] --priority (an integer, -PRIORITY_MAX … PRIORITY_MAX; higher enters first, arrival order among equals)
-- ARGV[15] --supersede: this waiter's ticket ("0" before it has one), else "": joining, it takes a ticket
--          from S and the places of every older --supersede waiter; a waiter whose ticket is not the
--          last S gave is superseded, in line or out of it (its place lapsed while it was stopped)
--
-- Returns
--   {1, fence, slot} when taken (slot -1 unless --slots; also when it was already ours: a retried
--     request that landed late);
--   {0, place in line (1 = first; 0: not in line, with --no-wait or when a per-key option keeps it
--     out: busy, and waiting would not change it), ms until a holder's lease runs out that would
--     let this waiter in (-1: none does), its --supersede ticket ("0": none)};
--   {2, how the key is in use ("exclusive", "shared" or "slots"), its n, holders, waiters} when it
--     is in use in another mode or with another n (nothing changed);
--   with ARGV[12] > 0, {3, done mark (JSON: host, pid, cmd, fence, started_ms, finished_ms), ms it
--     stays done, server time ms} when a run succeeded within its window (this waiter leaves the
--     line, and whoever may now enter is woken);
--   {4, who took the last ticket (S's `by` JSON)} when a newer --supersede waiter took this one's place (it
--     is out of line now, and records `superseded`).
--
-- The holder's hash gets `since_ms` and `taken_ms` (server time: a holder's wrong clock never shows in
-- status); `taken_ms` is the start of a --once-per window.
-- The line's order is its scores: a waiter's ticket within the band of its priority (line_score), so
-- ZRANGE gives the order of service and a join is O(log n).
-- Waiters whose place lease ran out are dropped (and places that are no waiter's: prune_line),
-- and holders (--slots/--shared) whose lease ran out freed; when that lets others in, they are
-- woken. Whatever the line's details say, this caller enters only in its own mode and only when
-- the holders actually there leave room for it, and never while release --force keeps the key
-- closed (line-lib's closure): not even a --shared or --slots holder beside the closed ones.

-- A waiter's score in Q: its ticket within its priority's band, highest priority first. Band b (0 for
-- PRIORITY_MAX, 2 * PRIORITY_MAX for -PRIORITY_MAX) holds the scores b * TICKET_SPAN + 1 … (b + 1) * TICKET_SPAN - 1,
-- tickets counting up by one from the band's last: arrival order among equals. The highest score,
-- 2001 * 2^32, is far inside the 2^52 of a double's exact integers (prune_line's bound).
local function priority_of(raw)
  local p = math.floor(tonumber(raw) or 0)
  return math.max(-PRIORITY_MAX, math.min(PRIORITY_MAX, p))
end
-- A --supersede ticket as stored (S's `seq`, a waiter's details): a whole number below 2^52, else 0 (forged).
local function ticket_of(raw)
  local t = tonumber(raw)
  if not t or t ~= math.floor(t) or t < 0 or t >= 4503599627370496 then return 0 end
  return t
end
local function line_score(Q, priority)
  local band = (PRIORITY_MAX - priority) * TICKET_SPAN
  local last = redis.call('ZREVRANGEBYSCORE', Q, '(' .. string.format('%d', band + TICKET_SPAN), '(' ..
    string.format('%d', band), 'LIMIT', 0, 1, 'WITHSCORES')
  local ticket = band + 1
  if #last > 0 then ticket = math.min(math.floor(tonumber(last[2])) + 1, band + TICKET_SPAN - 1) end
  return string.format('%d', ticket)
end
local refused = check_keys({1, 'hash', 2, 'counter', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash', 10, 'hash'})
if refused then return refused end
local L, F, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local D, H, T = KEYS[7], KEYS[8], KEYS[9]
local owner, ttl, mode, n = ARGV[1], tonumber(ARGV[2]), ARGV[6], tonumber(ARGV[7])
local priority, supersede = priority_of(ARGV[14]), ARGV[15] ~= ''
local S = KEYS[10]
local me = {'host', ARGV[3], 'pid', ARGV[4], 'cmd', ARGV[5], 'waited_ms', ARGV[11]}
-- The holder's extras (ARGV[13]): only the known names, only strings; flat for HSET and the history.
local extras, extra = {}, decoded(ARGV[13])
for _, name in ipairs({'reason', 'user', 'hold'}) do
  if type(extra[name]) == 'string' and extra[name] ~= '' then
    extras[#extras + 1] = name
    extras[#extras + 1] = extra[name]
  end
end
local forever = extra.hold == '1' and extra.forever == '1'
local hold_until = extra.hold == '1' and tonumber(extra.until_ms) or nil
-- Its fields in a waiter's or a --slots/--shared holder's JSON.
local function with_extras(t)
  for i = 1, #extras, 2 do t[extras[i]] = extras[i + 1] end
  return t
end
if (tonumber(ARGV[12]) or 0) > 0 then
  refused = check_keys({7, 'string'})
  if refused then return refused end
end
if redis.call('HGET', L, 'owner') == owner then
  if not forever then redis.call('PEXPIRE', L, ttl) end
  return {1, redis.call('HGET', L, 'fence'), -1}
end
local now = clock()
local pruned = prune_line(Q, QX, QD, now) + prune_holders(L, HX, now)
local mine = redis.call('HGET', L, 'h:' .. owner)
if mine then
  redis.call('ZADD', HX, now + ttl, owner)
  settle_holders(L, HX, now)
  local h = decoded(mine)
  return {1, tostring(h.fence), tonumber(h.slot) or -1}
end
-- --supersede: our ticket (what we were given, or what our details in line say when the reply was lost);
-- one that is not S's last was superseded, whether we are still in line or our place lapsed meanwhile.
local ticket = 0
if supersede then
  ticket = ticket_of(ARGV[15])
  if ticket == 0 and redis.call('ZSCORE', Q, owner) then ticket = ticket_of(waiter(QD, owner).supersede) end
  if ticket > 0 and ticket_of(redis.call('HGET', S, 'seq')) > ticket then
    if redis.call('ZSCORE', Q, owner) then
      drop_waiter(Q, QX, QD, owner)
      wake(ARGV[10], entrants(L, HX, Q, QD))
    end
    local raw = redis.call('HGET', S, 'by') or ''
    local by = decoded(raw)
    record(H, T, 'superseded', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8],
      'by_host', tostring(by.host or ''), 'by_pid', tostring(by.pid or ''), 'by_cmd', tostring(by.cmd or ''))
    return {4, raw}
  end
end

local kind, count, held_n = state(L, HX)
-- Closed by release --force: no kind enters until it opens; with no holder left but the closed
-- ones, the key is not in use in a mode, so any kind waits (or is busy) rather than refused.
local closed_ms, live = closure(L, HX, now)
local other, other_n = nil, 0
if counted(kind) then
  if mode ~= kind or held_n ~= n then other, other_n = kind, held_n end
elseif kind ~= 'none' then
  if counted(mode) then other, other_n = kind, 1 end
else
  local head = redis.call('ZRANGE', Q, 0, 0)[1]
  if head then
    local info = waiter(QD, head)
    local hm, hn = mode_of(info), tonumber(info.slots) or 1
    if counted(hm) and (mode ~= hm or hn ~= n) then other, other_n = hm, hn
    elseif not counted(hm) and counted(mode) then other, other_n = hm, 1 end
  end
end
if other and (closed_ms == 0 or live > 0) then
  return {2, other, other_n, count, redis.call('ZCARD', Q)}
end

-- --once-per: a run succeeded within its window; checked before anything is taken or queued.
if (tonumber(ARGV[12]) or 0) > 0 then
  local done = redis.call('GET', D)
  if done then
    local left = redis.call('PTTL', D)
    if redis.call('ZSCORE', Q, owner) then
      redis.call('ZREM', Q, owner)
      redis.call('ZREM', QX, owner)
      redis.call('HDEL', QD, owner)
      wake(ARGV[10], entrants(L, HX, Q, QD))
    end
    record(H, T, 'done', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8],
      'until_ms', tostring(now + math.max(left, 0)))
    return {3, done, left, now}
  end
end

local function take()
  redis.call('ZREM', Q, owner)
  redis.call('ZREM', QX, owner)
  redis.call('HDEL', QD, owner)
  redis.call('INCR', F)
  local fence = redis.call('GET', F)
  if mode == 'exclusive' then
    local held, lease = {}, ttl
    for i = 1, #extras do held[i] = extras[i] end
    if hold_until then lease = math.max(1, math.floor(hold_until - now)) end
    if extra.hold == '1' then
      held[#held + 1] = 'until_ms'
      held[#held + 1] = forever and '' or string.format('%d', now + lease)
    end
    local fields = {'owner', owner, 'fence', fence, 'host', ARGV[3], 'pid', ARGV[4], 'cmd', ARGV[5],
      'since_ms', tostring(now), 'ttl_ms', forever and '' or string.format('%d', lease), 'taken_ms', tostring(now),
      unpack(held)}
    -- A hold until `dlock unhold` has no expiry: the hash (absent until now) is written without one.
    if forever then redis.call('HSET', L, unpack(fields))
    else
      local failed = write_holder(L, lease, unpack(fields))
      if failed then return failed end
    end
    record(H, T, 'acquired', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'fence', fence, 'slot', '-1',
      unpack(held))
    return {1, fence, -1}
  end
  local slot = -1
  if mode == 'slots' then
    for i = 0, n - 1 do
      if redis.call('HEXISTS', L, 's:' .. i) == 0 then slot = i break end
    end
    if slot < 0 then return nil end
    redis.call('HSET', L, 's:' .. slot, owner)
  end
  redis.call('HSET', L, 'mode', mode, 'slots', ARGV[7], 'h:' .. owner, cjson.encode(with_extras({fence = fence,
    slot = tostring(slot), host = ARGV[3], pid = ARGV[4], cmd = ARGV[5], since_ms = tostring(now), ttl_ms = ARGV[2],
    taken_ms = tostring(now)})))
  redis.call('ZADD', HX, now + ttl, owner)
  local expired = redis.pcall('PEXPIRE', L, ttl)
  if type(expired) == 'table' and expired.err then
    drop_holder(L, HX, owner)
    settle_holders(L, HX, now)
    return expired
  end
  settle_holders(L, HX, now)
  -- Shared holders enter together, slots fill up: whoever may now enter too is told.
  wake(ARGV[10], entrants(L, HX, Q, QD))
  record(H, T, 'acquired', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'fence', fence,
    'slot', tostring(slot), unpack(extras))
  return {1, fence, slot}
end

local function holders_end_in()
  if kind == 'exclusive' then return redis.call('PTTL', L) end
  local first = redis.call('ZRANGE', HX, 0, 0, 'WITHSCORES')
  if #first == 0 then return -1 end
  return math.max(0, tonumber(first[2]) - now)
end

-- The line's details may be forged: whoever the line lets in, the holders actually there decide.
local room = closed_ms == 0 and
  (kind == 'none' or (mode == 'shared' and kind == 'shared') or (counted(mode) and count < n))
local queued = redis.call('ZSCORE', Q, owner)
if not queued and ARGV[8] ~= '1' then
  if redis.call('ZCARD', Q) == 0 then
    if room then
      local taken = take()
      if taken then return taken end
    end
  end
  local why = 'held'
  if redis.call('ZCARD', Q) > 0 and kind == 'none' then why = 'line' end
  record(H, T, 'busy', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'why', why)
  return {0, 0, -1, '0'}
end
local function details(since)
  local supersedes = nil
  if supersede then supersedes = string.format('%d', ticket) end
  return cjson.encode(with_extras({mode = mode, slots = ARGV[7], host = ARGV[3], pid = ARGV[4], cmd = ARGV[5],
    since_ms = since, priority = tostring(priority), supersede = supersedes}))
end
if not queued then
  -- --supersede, joining the first time: the next ticket, and every older --supersede waiter leaves the line
  -- now (each is told on its channel, and says so itself); the holders are never touched.
  if supersede and ticket == 0 then
    ticket = ticket_of(redis.call('HGET', S, 'seq')) + 1
    redis.call('HSET', S, 'seq', string.format('%d', ticket), 'by',
      cjson.encode({host = ARGV[3], pid = ARGV[4], cmd = ARGV[5], at_ms = tostring(now)}))
    for _, w in ipairs(redis.call('ZRANGE', Q, 0, SUPERSEDE_SCAN_MAX - 1)) do
      if ticket_of(waiter(QD, w).supersede) > 0 then
        drop_waiter(Q, QX, QD, w)
        redis.pcall('PUBLISH', ARGV[10] .. w, 'superseded')
        pruned = pruned + 1
      end
    end
  end
  redis.call('ZADD', Q, line_score(Q, priority), owner)
  redis.call('HSET', QD, owner, details(tostring(now)))
else
  -- Our details in line say what we ask for, so the others' admission reads the truth.
  local info = waiter(QD, owner)
  if mode_of(info) ~= mode or (counted(mode) and tonumber(info.slots) ~= n) or info.priority ~= tostring(priority) or
    ticket_of(info.supersede) ~= ticket then
    redis.call('HSET', QD, owner, details(tostring(tonumber(info.since_ms) or now)))
  end
end
local lease = tonumber(ARGV[9])
redis.call('ZADD', QX, now + lease, owner)
redis.call('PEXPIRE', Q, lease)
redis.call('PEXPIRE', QX, lease)
redis.call('PEXPIRE', QD, lease)

local may = entrants(L, HX, Q, QD)
for _, w in ipairs(may) do
  if w == owner and room then
    local taken = take()
    if taken then return taken end
  end
end
if pruned > 0 then wake(ARGV[10], may) end
local place = redis.call('ZRANK', Q, owner)
local next_in = -1
if place < math.max(n, 1) then next_in = holders_end_in() end
if closed_ms > 0 then next_in = math.max(next_in, closed_ms) end
return {0, place + 1, next_in, string.format('%d', ticket)}
