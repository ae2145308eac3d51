// The Lua scripts. Each takes every key it touches in KEYS (Cluster-safe), compares the
// owner token before it writes, and returns counters as strings (64-bit safe).

/**
 * ACQUIRE
 * KEYS[1] lock hash, KEYS[2] fence counter
 * ARGV[1] owner token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid, ARGV[5] cmd, ARGV[6] since ms
 * Returns {1, fence} when acquired (or already ours: a retried request that landed late),
 * else {0, remaining PTTL in ms, holder's owner token or ""}.
 */
export const ACQUIRE = `
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, redis.call('HGET', KEYS[1], 'fence')}
end
if owner or redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('PTTL', KEYS[1]), owner or ''}
end
redis.call('INCR', KEYS[2])
local fence = redis.call('GET', KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', fence, 'host', ARGV[3], 'pid', ARGV[4],
  'cmd', ARGV[5], 'since_ms', ARGV[6], 'ttl_ms', ARGV[2])
-- A script stopped half-way keeps its writes: never leave a lock without an expiry behind
-- (e.g. an ACL that denies PEXPIRE). Undo the hash and pass the error on.
local expired = redis.pcall('PEXPIRE', KEYS[1], ARGV[2])
if type(expired) == 'table' and expired.err then
  redis.pcall('DEL', KEYS[1])
  return expired
end
return {1, fence}
`;

/**
 * EXTEND
 * KEYS[1] lock hash; ARGV[1] owner token, ARGV[2] ttl ms
 * Returns 1 when the owner matched and the lease was renewed, else 0. Never re-creates a lock.
 */
export const EXTEND = `
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/**
 * RETAKE (Redlock renewal only: put our lock back on an instance that lost it, e.g. restarted
 * without persistence, while a majority of the other instances still holds it for us)
 * KEYS[1] lock hash, KEYS[2] fence counter
 * ARGV[1] owner token, ARGV[2] ttl ms (what is left of the lease the majority just renewed),
 * ARGV[3] fencing token T we hold (decimal string), ARGV[4] host, ARGV[5] pid, ARGV[6] cmd,
 * ARGV[7] since ms, ARGV[8] the lease length (the hash's `ttl_ms`)
 * Returns 1 when the lock is ours there now (re-created, or it already was), 0 when the key
 * exists with another owner (never overwritten). Re-creating raises the counter to
 * max(counter, T) (decimal strings compared by length then digits), so later tokens stay above
 * T. The caller runs it only after a renewal that a majority confirmed, within its validity.
 */
export const RETAKE = `
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  return 1
end
if owner or redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local current = redis.call('GET', KEYS[2]) or '0'
if #current < #ARGV[3] or (#current == #ARGV[3] and current < ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[3])
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'fence', ARGV[3], 'host', ARGV[4], 'pid', ARGV[5],
  'cmd', ARGV[6], 'since_ms', ARGV[7], 'ttl_ms', ARGV[8])
local expired = redis.pcall('PEXPIRE', KEYS[1], ARGV[2])
if type(expired) == 'table' and expired.err then
  redis.pcall('DEL', KEYS[1])
  return expired
end
return 1
`;

/**
 * RAISE_FENCE (Redlock round 2: the counter becomes max(counter, T))
 * KEYS[1] lock hash, KEYS[2] fence counter; ARGV[1] owner token, ARGV[2] T (decimal string)
 * Returns 1 when the owner still matched (counter and the hash's fence are now >= T), else 0.
 * Compares decimal strings by length then digits, so counters past 2^53 stay exact.
 */
export const RAISE_FENCE = `
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
local current = redis.call('GET', KEYS[2]) or '0'
if #current < #ARGV[2] or (#current == #ARGV[2] and current < ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
redis.call('HSET', KEYS[1], 'fence', ARGV[2])
return 1
`;

// ---------------------------------------------------------------------------------------------
// The line (one instance, a Sentinel-managed master or a Cluster): waiters served in arrival
// order, up to n holders at once (--slots), or shared holders (--shared). Keys of one lock, all
// with the hash tag {<key>} (see keys.ts):
//   L  lock hash: an exclusive holder as above (`owner`, `fence`, …); or, with --slots n or
//      --shared, `mode` ("slots"/"shared"), `slots` (n), per holder `h:<owner>` (JSON of its
//      fence, slot, host, pid, cmd, since_ms, ttl_ms) and per taken slot `s:<slot>` (its owner)
//   HX holders' lease ends (sorted set: owner → ms on the server's clock); --slots/--shared only
//   Q  the line (sorted set: owner → ticket, in arrival order)
//   QX each waiter's place lease end (sorted set: owner → ms); renewed while it waits
//   QD each waiter's details (hash: owner → JSON of mode, slots, host, pid, cmd, since_ms)
// Each waiter listens on its own channel <wake prefix><owner>: a release, or a waiter leaving,
// publishes only to the waiters that may now enter. Times are the server's (TIME), so hosts'
// clocks never matter. A holder of several slots/shared modes is never made by forged data:
// every field read back is decoded with pcall and defaulted.

const LINE_LIB = `
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function decoded(raw)
  if type(raw) ~= 'string' then return {} end
  local ok, value = pcall(cjson.decode, raw)
  if ok and type(value) == 'table' then return value end
  return {}
end
local function mode_of(info)
  if info.mode == 'shared' or info.mode == 'slots' then return info.mode end
  return 'exclusive'
end
local function waiter(QD, w)
  return decoded(redis.call('HGET', QD, w))
end
local function prune_line(Q, QX, QD, now)
  local gone = redis.call('ZRANGEBYSCORE', QX, '-inf', now)
  for _, w in ipairs(gone) do
    redis.call('ZREM', Q, w)
    redis.call('ZREM', QX, w)
    redis.call('HDEL', QD, w)
  end
  return #gone
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
  local ms = math.max(1, tonumber(last[2]) - now)
  redis.call('PEXPIRE', L, ms)
  redis.call('PEXPIRE', HX, ms)
end
local function prune_holders(L, HX, now)
  if redis.call('HEXISTS', L, 'mode') == 0 then return 0 end
  local gone = redis.call('ZRANGEBYSCORE', HX, '-inf', now)
  for _, h in ipairs(gone) do drop_holder(L, HX, h) end
  if #gone > 0 or redis.call('EXISTS', HX) == 0 then settle_holders(L, HX, now) end
  return #gone
end
local function state(L, HX)
  if redis.call('EXISTS', L) == 0 then return 'none', 0, 0 end
  local mode = redis.call('HGET', L, 'mode')
  if mode == 'shared' then return 'shared', redis.call('ZCARD', HX), 0 end
  if mode == 'slots' then return 'slots', redis.call('ZCARD', HX), tonumber(redis.call('HGET', L, 'slots')) or 0 end
  return 'exclusive', 1, 1
end
local function entrants(L, HX, Q, QD)
  local kind, count, n = state(L, HX)
  if kind == 'exclusive' then return {} end
  local head = redis.call('ZRANGE', Q, 0, 0)[1]
  if not head then return {} end
  local info = waiter(QD, head)
  local mode = mode_of(info)
  if mode == 'slots' then
    if kind == 'shared' then return {} end
    if kind == 'none' then n = tonumber(info.slots) or 1 end
    if n - count <= 0 then return {} end
    return redis.call('ZRANGE', Q, 0, n - count - 1)
  end
  if kind == 'slots' then return {} end
  if mode == 'exclusive' then
    if kind == 'none' then return {head} end
    return {}
  end
  local run = {}
  for _, w in ipairs(redis.call('ZRANGE', Q, 0, 9999)) do
    if mode_of(waiter(QD, w)) ~= 'shared' then break end
    run[#run + 1] = w
  end
  return run
end
local function wake(prefix, who)
  local told = true
  for _, w in ipairs(who) do
    local sent = redis.pcall('PUBLISH', prefix .. w, 'go')
    if type(sent) == 'table' and sent.err then told = false end
  end
  return told
end
`;

/**
 * ENTER (one instance: take the lock in line order, or keep a place in line)
 * KEYS[1] L, KEYS[2] fence counter, KEYS[3] HX, KEYS[4] Q, KEYS[5] QX, KEYS[6] QD
 * ARGV[1] owner token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid, ARGV[5] cmd, ARGV[6] since ms,
 * ARGV[7] mode "exclusive" | "shared" | "slots", ARGV[8] n (slots), ARGV[9] "1" to wait in line,
 * "0" for --no-wait (never queues: busy when the lock has no room or anyone is in line),
 * ARGV[10] place lease ms, ARGV[11] wake channel prefix
 * Returns {1, fence, slot} when taken (slot -1 unless --slots; also when it was already ours: a
 * retried request that landed late); {0, place in line (1 = first; 0 with --no-wait), ms until a
 * holder's lease runs out that would let this waiter in (-1: none does)}; {2, how the key is in
 * use ("exclusive", "shared" or "slots"), its n, holders, waiters} when it is in use in another
 * mode or with another n (nothing changed).
 * Waiters whose place lease ran out are dropped, and holders (--slots/--shared) whose lease ran
 * out freed; when that lets others in, they are woken.
 */
export const ENTER = `${LINE_LIB}
local L, F, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local owner, ttl, mode, n = ARGV[1], tonumber(ARGV[2]), ARGV[7], tonumber(ARGV[8])
if redis.call('HGET', L, 'owner') == owner then
  redis.call('PEXPIRE', L, ttl)
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

local kind, count, held_n = state(L, HX)
local other, other_n = nil, 0
if kind == 'slots' then
  if mode ~= 'slots' or held_n ~= n then other, other_n = 'slots', held_n end
elseif kind ~= 'none' then
  if mode == 'slots' then other, other_n = kind, 1 end
else
  local head = redis.call('ZRANGE', Q, 0, 0)[1]
  if head then
    local info = waiter(QD, head)
    local hm, hn = mode_of(info), tonumber(info.slots) or 1
    if hm == 'slots' and (mode ~= 'slots' or hn ~= n) then other, other_n = 'slots', hn
    elseif hm ~= 'slots' and mode == 'slots' then other, other_n = hm, 1 end
  end
end
if other then
  return {2, other, other_n, count, redis.call('ZCARD', Q)}
end

local function take()
  redis.call('ZREM', Q, owner)
  redis.call('ZREM', QX, owner)
  redis.call('HDEL', QD, owner)
  redis.call('INCR', F)
  local fence = redis.call('GET', F)
  if mode == 'exclusive' then
    redis.call('HSET', L, 'owner', owner, 'fence', fence, 'host', ARGV[3], 'pid', ARGV[4],
      'cmd', ARGV[5], 'since_ms', ARGV[6], 'ttl_ms', ARGV[2])
    local expired = redis.pcall('PEXPIRE', L, ttl)
    if type(expired) == 'table' and expired.err then
      redis.pcall('DEL', L)
      return expired
    end
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
  redis.call('HSET', L, 'mode', mode, 'slots', ARGV[8], 'h:' .. owner, cjson.encode({fence = fence,
    slot = tostring(slot), host = ARGV[3], pid = ARGV[4], cmd = ARGV[5], since_ms = ARGV[6], ttl_ms = ARGV[2]}))
  redis.call('ZADD', HX, now + ttl, owner)
  local expired = redis.pcall('PEXPIRE', L, ttl)
  if type(expired) == 'table' and expired.err then
    drop_holder(L, HX, owner)
    settle_holders(L, HX, now)
    return expired
  end
  settle_holders(L, HX, now)
  -- Shared holders enter together, slots fill up: whoever may now enter too is told.
  wake(ARGV[11], entrants(L, HX, Q, QD))
  return {1, fence, slot}
end

local function holders_end_in()
  if kind == 'exclusive' then return redis.call('PTTL', L) end
  local first = redis.call('ZRANGE', HX, 0, 0, 'WITHSCORES')
  if #first == 0 then return -1 end
  return math.max(0, tonumber(first[2]) - now)
end

local queued = redis.call('ZSCORE', Q, owner)
if not queued and ARGV[9] ~= '1' then
  if redis.call('ZCARD', Q) == 0 then
    local room = kind == 'none' or (mode == 'shared' and kind == 'shared') or (mode == 'slots' and count < n)
    if room then
      local taken = take()
      if taken then return taken end
    end
  end
  return {0, 0, -1}
end
if not queued then
  local last = redis.call('ZRANGE', Q, -1, -1, 'WITHSCORES')
  local ticket = 1
  if #last > 0 then ticket = tonumber(last[2]) + 1 end
  redis.call('ZADD', Q, ticket, owner)
  redis.call('HSET', QD, owner, cjson.encode({mode = mode, slots = ARGV[8], host = ARGV[3], pid = ARGV[4],
    cmd = ARGV[5], since_ms = tostring(now)}))
end
local lease = tonumber(ARGV[10])
redis.call('ZADD', QX, now + lease, owner)
redis.call('PEXPIRE', Q, lease)
redis.call('PEXPIRE', QX, lease)
redis.call('PEXPIRE', QD, lease)

local may = entrants(L, HX, Q, QD)
for _, w in ipairs(may) do
  if w == owner then
    local taken = take()
    if taken then return taken end
  end
end
if pruned > 0 then wake(ARGV[11], may) end
local place = redis.call('ZRANK', Q, owner)
local next_in = -1
if place < math.max(n, 1) then next_in = holders_end_in() end
return {0, place + 1, next_in}
`;

/**
 * EXTEND_HOLDER (renew one holder of --slots or --shared)
 * KEYS[1] L, KEYS[2] HX; ARGV[1] owner token, ARGV[2] ttl ms
 * Returns 1 when it still held (its lease now ends ttl from now), else 0. Never re-creates one.
 */
export const EXTEND_HOLDER = `${LINE_LIB}
local L, HX = KEYS[1], KEYS[2]
local now = clock()
local ends = redis.call('ZSCORE', HX, ARGV[1])
if redis.call('HEXISTS', L, 'h:' .. ARGV[1]) == 0 or not ends or tonumber(ends) <= now then
  return 0
end
redis.call('ZADD', HX, now + tonumber(ARGV[2]), ARGV[1])
settle_holders(L, HX, now)
return 1
`;

/**
 * LEAVE (a waiter gives up: its wait ran out, or it was signalled)
 * KEYS[1] L, KEYS[2] HX, KEYS[3] Q, KEYS[4] QX, KEYS[5] QD; ARGV[1] owner token, ARGV[2] wake prefix
 * Returns 1 when it was in line (the waiters that may enter now are woken), else 0.
 */
export const LEAVE = `${LINE_LIB}
local L, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if not redis.call('ZSCORE', Q, ARGV[1]) then return 0 end
redis.call('ZREM', Q, ARGV[1])
redis.call('ZREM', QX, ARGV[1])
redis.call('HDEL', QD, ARGV[1])
local now = clock()
prune_line(Q, QX, QD, now)
prune_holders(L, HX, now)
wake(ARGV[2], entrants(L, HX, Q, QD))
return 1
`;

/**
 * RELEASE
 * KEYS[1] L, KEYS[2] release channel, KEYS[3] HX, KEYS[4] Q, KEYS[5] QX, KEYS[6] QD
 * ARGV[1] owner token, ARGV[2] "0" to delete without telling the waiters (undoing a Redlock
 * attempt that never held a quorum), ARGV[3] wake prefix
 * Returns 1 when the owner held it (the exclusive hash, or one holder of --slots/--shared) and
 * its hold is deleted, the waiters that may now enter woken (unless ARGV[2] is "0"); 2 when it
 * was deleted but a PUBLISH was refused (an ACL without +publish: waiters notice by polling);
 * else 0. The delete is done first, so an error reply means nothing was deleted.
 */
export const RELEASE = `${LINE_LIB}
local L, R, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
if redis.call('HGET', L, 'owner') == ARGV[1] then
  redis.call('DEL', L)
elseif redis.call('HEXISTS', L, 'h:' .. ARGV[1]) == 1 then
  drop_holder(L, HX, ARGV[1])
  settle_holders(L, HX, clock())
else
  return 0
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
`;

/**
 * INSPECT (read only)
 * KEYS[1] L, KEYS[2] fence counter, KEYS[3] HX, KEYS[4] Q, KEYS[5] QX, KEYS[6] QD
 * Returns {PTTL of L, fence counter or false, flat HGETALL of L, flat ZRANGE HX WITHSCORES
 * (owner, lease end ms), the line as a flat list (owner, place lease end ms, details JSON) of at
 * most its first 1000 waiters, its length, the server's time in ms}.
 */
export const INSPECT = `${LINE_LIB}
local L, F, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local line = {}
for _, w in ipairs(redis.call('ZRANGE', Q, 0, 999)) do
  line[#line + 1] = w
  line[#line + 1] = redis.call('ZSCORE', QX, w) or '0'
  line[#line + 1] = redis.call('HGET', QD, w) or ''
end
return {redis.call('PTTL', L), redis.call('GET', F), redis.call('HGETALL', L),
  redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES'), line, redis.call('ZCARD', Q), clock()}
`;

/**
 * FORCE_RELEASE (operator escape hatch: no owner check)
 * KEYS[1] L, KEYS[2] release channel, KEYS[3] HX, KEYS[4] Q, KEYS[5] QX, KEYS[6] QD
 * ARGV[1] "now" to delete at once, else "close"; ARGV[2] the time in ms (`forced_ms`);
 * ARGV[3] a slot number to remove only that holder of --slots, "" for every holder;
 * ARGV[4] wake prefix
 * Returns {ms the key stays closed (0: deleted, or nothing to release), flat HGETALL of the
 * exclusive holder as it was (empty if none), the removed holders of --slots/--shared as their
 * details JSON}.
 * "close" keeps each removed hold closed to new holders until its lease runs out: an exclusive
 * hash's `owner` becomes "" (no token matches it, so that holder's next renewal is refused and
 * its dlock stops its command); a --slots/--shared holder is renamed "!<owner>" (its slot stays
 * taken, its renewal is refused). A hash without an expiry (not one dlock wrote) is deleted: it
 * would stay closed forever. "now" deletes and wakes the waiters that may now enter.
 */
export const FORCE_RELEASE = `${LINE_LIB}
local L, R, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local function woken()
  redis.call('PUBLISH', R, 'force')
  if redis.call('EXISTS', Q) == 1 then wake(ARGV[4], entrants(L, HX, Q, QD)) end
end
if redis.call('HEXISTS', L, 'mode') == 0 then
  local holder = redis.call('HGETALL', L)
  local pttl = redis.call('PTTL', L)
  if #holder == 0 then return {0, holder, {}} end
  if ARGV[1] ~= 'now' and pttl > 0 then
    redis.call('HSET', L, 'owner', '', 'forced_ms', ARGV[2])
    return {pttl, holder, {}}
  end
  redis.call('DEL', L)
  woken()
  return {0, holder, {}}
end
local now = clock()
prune_holders(L, HX, now)
local scored = redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES')
local list, closed = {}, 0
for i = 1, #scored, 2 do
  local owner, ends = scored[i], tonumber(scored[i + 1])
  local raw = redis.call('HGET', L, 'h:' .. owner)
  local h = decoded(raw)
  if string.sub(owner, 1, 1) ~= '!' and (ARGV[3] == '' or tostring(h.slot) == ARGV[3]) then
    list[#list + 1] = raw or '{}'
    drop_holder(L, HX, owner)
    if ARGV[1] ~= 'now' then
      h.forced_ms = ARGV[2]
      redis.call('HSET', L, 'h:!' .. owner, cjson.encode(h))
      if h.slot ~= nil and tostring(h.slot) ~= '-1' then redis.call('HSET', L, 's:' .. tostring(h.slot), '!' .. owner) end
      redis.call('ZADD', HX, ends, '!' .. owner)
      closed = math.max(closed, ends - now)
    end
  end
end
settle_holders(L, HX, now)
if ARGV[1] == 'now' and #list > 0 then woken() end
return {closed, {}, list}
`;
