// The Lua scripts. Each takes every key it touches in KEYS (Cluster-safe), checks their types
// before it writes (KEY_CHECK: an error reply means nothing changed), compares the owner token
// before it writes, and returns counters as strings (64-bit safe).

/**
 * HISTORY: the scripts that do the work append one entry per event to the key's stream
 * `<prefix>{<key>}:history` in the same call (no extra round trip), capped exactly at this many
 * entries (XADD MAXLEN). Best effort: an XADD the server refuses (an ACL without +xadd, a
 * foreign key of another type there) never fails the lock operation. Every entry has `event`,
 * `host`, `pid`, `cmd`; its ID is the server's time in ms. Events and their own fields:
 *   acquired  fence, slot, waited_ms                 released  fence, slot, exit, held_ms
 *   lost      fence, why (expired|forced|taken)      forced    fence, slot, by_host, by_pid, now
 *   busy      waited_ms, why (held or line: turned away by -n; wait: its --wait ran out)
 *   done      waited_ms, until_ms (turned away by --once-per: a run succeeded in this window)
 *   left      waited_ms (a waiter interrupted while in line)
 * One instance only (a server, Sentinel, Cluster): with Redlock nothing is recorded.
 */
export const HISTORY_MAX = 1000;

/**
 * KEY_CHECK, prefixed to every script: `check_keys({i, kind, …})` asks each KEYS[i] with a read
 * of its kind (commands dlock's ACL grants already) before the script writes anything, so a key
 * of the wrong type (or a fence counter that is not one) fails the call with nothing changed:
 * "WRONGTYPE dlock KEYS[i] <kind>" (foreign.ts names the key). Kinds: hash, zset, string,
 * counter (a string holding an integer from 0 that INCR can raise). Other errors (an ACL that
 * denies the read) are passed on as they are. A missing key is fine.
 */
const KEY_CHECK = `
local function counter_ok(v)
  if not string.match(v, '^0$') and not string.match(v, '^[1-9]%d*$') then return false end
  return #v < 19 or (#v == 19 and v < '9223372036854775807')
end
local function check_keys(checks)
  for i = 1, #checks, 2 do
    local index, kind = checks[i], checks[i + 1]
    local key, probe = KEYS[index], nil
    if kind == 'hash' then probe = redis.pcall('HEXISTS', key, 'owner')
    elseif kind == 'zset' then probe = redis.pcall('ZCARD', key)
    else probe = redis.pcall('GET', key) end
    local bad = type(probe) == 'table' and probe.err ~= nil
    if bad and not string.match(probe.err, '^WRONGTYPE') then return probe end
    if not bad and kind == 'counter' and type(probe) == 'string' then bad = not counter_ok(probe) end
    if bad then return redis.error_reply('WRONGTYPE dlock KEYS[' .. index .. '] ' .. kind) end
  end
end
`;

/**
 * ACQUIRE
 * KEYS[1] lock hash, KEYS[2] fence counter
 * ARGV[1] owner token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid, ARGV[5] cmd, ARGV[6] since ms
 * Returns {1, fence} when acquired (or already ours: a retried request that landed late),
 * else {0, remaining PTTL in ms, holder's owner token or ""}.
 */
export const ACQUIRE = `${KEY_CHECK}
local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
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
 * KEYS[1] lock hash, KEYS[2] history stream (see HISTORY below)
 * ARGV[1] owner token, ARGV[2] ttl ms; history (dlock run and the keeper on one instance; else
 * ARGV[3] is "0"): ARGV[3] "1" to record a loss, ARGV[4] host, ARGV[5] pid, ARGV[6] cmd, ARGV[7] fence
 * Returns 1 when the owner matched and the lease was renewed, else 0 (and, with ARGV[3] "1", a
 * "lost" entry says why: expired, forced (`release --force` closed it) or taken). Never
 * re-creates a lock.
 */
export const EXTEND = `${KEY_CHECK}
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
  redis.pcall('XADD', KEYS[2], 'MAXLEN', ${HISTORY_MAX}, '*', 'event', 'lost', 'host', ARGV[4], 'pid', ARGV[5],
    'cmd', ARGV[6], 'fence', ARGV[7], 'why', why)
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
export const RETAKE = `${KEY_CHECK}
local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
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
export const RAISE_FENCE = `${KEY_CHECK}
local refused = check_keys({1, 'hash', 2, 'counter'})
if refused then return refused end
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

/**
 * A place lease further ahead than this is not a waiter's (each asks for a few seconds, line.ts
 * PLACE_LEASE_MS): forged, it would hold the line up until then. Dropped when the line is pruned.
 */
export const PLACE_LEASE_LIMIT_MS = 60_000;

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

const LINE_LIB = `${KEY_CHECK}
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
  -- 1 ... 2^52 (tickets count up by one from 1, exact in a double), a head with no lease at all.
  drop(redis.call('ZRANGEBYSCORE', QX, '(' .. string.format('%d', now + ${PLACE_LEASE_LIMIT_MS}), '+inf'))
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
  -- Only a hash of --slots/--shared holders: never an exclusive holder's, whatever \`mode\` it shows.
  if redis.call('HEXISTS', L, 'mode') == 0 or redis.call('HEXISTS', L, 'owner') == 1 then return 0 end
  local gone = redis.call('ZRANGEBYSCORE', HX, '-inf', now)
  for _, h in ipairs(gone) do drop_holder(L, HX, h) end
  if #gone > 0 or redis.call('EXISTS', HX) == 0 then settle_holders(L, HX, now) end
  return #gone
end
local function state(L, HX)
  if redis.call('EXISTS', L) == 0 then return 'none', 0, 0 end
  -- An exclusive holder's fields win over a \`mode\` beside them (forged, or left by an old bug).
  if redis.call('HEXISTS', L, 'owner') == 1 then return 'exclusive', 1, 1 end
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
local function record(H, event, ...)
  redis.pcall('XADD', H, 'MAXLEN', ${HISTORY_MAX}, '*', 'event', event, ...)
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
 * (once per window, history) KEYS[7] done mark, KEYS[8] history; ARGV[12] ms this dlock has
 * waited so far, ARGV[13] --once-per window ms ("0": none)
 * Returns {1, fence, slot} when taken (slot -1 unless --slots; also when it was already ours: a
 * retried request that landed late); {0, place in line (1 = first; 0 with --no-wait), ms until a
 * holder's lease runs out that would let this waiter in (-1: none does)}; {2, how the key is in
 * use ("exclusive", "shared" or "slots"), its n, holders, waiters} when it is in use in another
 * mode or with another n (nothing changed); with ARGV[13] > 0, {3, done mark (JSON: host, pid,
 * cmd, fence, started_ms, finished_ms), ms it stays done, server time ms} when a run succeeded
 * within its window (this waiter leaves the line, and whoever may now enter is woken).
 * The holder's hash gets `taken_ms` (server time): the start of a --once-per window.
 * Waiters whose place lease ran out are dropped (and places that are no waiter's: prune_line),
 * and holders (--slots/--shared) whose lease ran out freed; when that lets others in, they are
 * woken. Whatever the line's details say, this caller enters only in its own mode and only when
 * the holders actually there leave room for it.
 */
export const ENTER = `${LINE_LIB}
local refused = check_keys({1, 'hash', 2, 'counter', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, F, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local D, H = KEYS[7], KEYS[8]
local owner, ttl, mode, n = ARGV[1], tonumber(ARGV[2]), ARGV[7], tonumber(ARGV[8])
local me = {'host', ARGV[3], 'pid', ARGV[4], 'cmd', ARGV[5], 'waited_ms', ARGV[12]}
if (tonumber(ARGV[13]) or 0) > 0 then
  refused = check_keys({7, 'string'})
  if refused then return refused end
end
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

-- --once-per: a run succeeded within its window; checked before anything is taken or queued.
if (tonumber(ARGV[13]) or 0) > 0 then
  local done = redis.call('GET', D)
  if done then
    local left = redis.call('PTTL', D)
    if redis.call('ZSCORE', Q, owner) then
      redis.call('ZREM', Q, owner)
      redis.call('ZREM', QX, owner)
      redis.call('HDEL', QD, owner)
      wake(ARGV[11], entrants(L, HX, Q, QD))
    end
    record(H, 'done', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'until_ms', tostring(now + math.max(left, 0)))
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
    redis.call('HSET', L, 'owner', owner, 'fence', fence, 'host', ARGV[3], 'pid', ARGV[4],
      'cmd', ARGV[5], 'since_ms', ARGV[6], 'ttl_ms', ARGV[2], 'taken_ms', tostring(now))
    local expired = redis.pcall('PEXPIRE', L, ttl)
    if type(expired) == 'table' and expired.err then
      redis.pcall('DEL', L)
      return expired
    end
    record(H, 'acquired', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'fence', fence, 'slot', '-1')
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
    slot = tostring(slot), host = ARGV[3], pid = ARGV[4], cmd = ARGV[5], since_ms = ARGV[6], ttl_ms = ARGV[2],
    taken_ms = tostring(now)}))
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
  record(H, 'acquired', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'fence', fence, 'slot', tostring(slot))
  return {1, fence, slot}
end

local function holders_end_in()
  if kind == 'exclusive' then return redis.call('PTTL', L) end
  local first = redis.call('ZRANGE', HX, 0, 0, 'WITHSCORES')
  if #first == 0 then return -1 end
  return math.max(0, tonumber(first[2]) - now)
end

-- The line's details may be forged: whoever the line lets in, the holders actually there decide.
local room = kind == 'none' or (mode == 'shared' and kind == 'shared') or (mode == 'slots' and count < n)
local queued = redis.call('ZSCORE', Q, owner)
if not queued and ARGV[9] ~= '1' then
  if redis.call('ZCARD', Q) == 0 then
    if room then
      local taken = take()
      if taken then return taken end
    end
  end
  local why = 'held'
  if redis.call('ZCARD', Q) > 0 and kind == 'none' then why = 'line' end
  record(H, 'busy', me[1], me[2], me[3], me[4], me[5], me[6], me[7], me[8], 'why', why)
  return {0, 0, -1}
end
if not queued then
  local last = redis.call('ZRANGE', Q, -1, -1, 'WITHSCORES')
  local ticket = 1
  if #last > 0 then ticket = math.floor(tonumber(last[2])) + 1 end
  redis.call('ZADD', Q, ticket, owner)
  redis.call('HSET', QD, owner, cjson.encode({mode = mode, slots = ARGV[8], host = ARGV[3], pid = ARGV[4],
    cmd = ARGV[5], since_ms = tostring(now)}))
else
  -- Our details in line say what we ask for, so the others' admission reads the truth.
  local info = waiter(QD, owner)
  if mode_of(info) ~= mode or (mode == 'slots' and tonumber(info.slots) ~= n) then
    redis.call('HSET', QD, owner, cjson.encode({mode = mode, slots = ARGV[8], host = ARGV[3], pid = ARGV[4],
      cmd = ARGV[5], since_ms = tostring(tonumber(info.since_ms) or now)}))
  end
end
local lease = tonumber(ARGV[10])
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
if pruned > 0 then wake(ARGV[11], may) end
local place = redis.call('ZRANK', Q, owner)
local next_in = -1
if place < math.max(n, 1) then next_in = holders_end_in() end
return {0, place + 1, next_in}
`;

/**
 * EXTEND_HOLDER (renew one holder of --slots or --shared)
 * KEYS[1] L, KEYS[2] HX, KEYS[3] history; ARGV[1] owner token, ARGV[2] ttl ms; ARGV[3..7] as
 * EXTEND's (record a loss: "1", host, pid, cmd, fence)
 * Returns 1 when it still held (its lease now ends ttl from now), else 0. Never re-creates one.
 */
export const EXTEND_HOLDER = `${LINE_LIB}
local refused = check_keys({1, 'hash', 2, 'zset'})
if refused then return refused end
local L, HX = KEYS[1], KEYS[2]
local now = clock()
local ends = redis.call('ZSCORE', HX, ARGV[1])
if redis.call('HEXISTS', L, 'h:' .. ARGV[1]) == 0 or not ends or tonumber(ends) <= now then
  if ARGV[3] == '1' then
    local why = 'expired'
    if redis.call('HEXISTS', L, 'h:!' .. ARGV[1]) == 1 then why = 'forced' end
    record(KEYS[3], 'lost', 'host', ARGV[4], 'pid', ARGV[5], 'cmd', ARGV[6], 'fence', ARGV[7], 'why', why)
  end
  return 0
end
redis.call('ZADD', HX, now + tonumber(ARGV[2]), ARGV[1])
settle_holders(L, HX, now)
return 1
`;

/**
 * LEAVE (a waiter gives up: its wait ran out, or it was signalled)
 * KEYS[1] L, KEYS[2] HX, KEYS[3] Q, KEYS[4] QX, KEYS[5] QD, KEYS[6] history; ARGV[1] owner token,
 * ARGV[2] wake prefix, ARGV[3] what to record: "busy" (its --wait ran out), "left" (interrupted)
 * or "" (nothing), ARGV[4] ms it waited
 * Returns 1 when it was in line (the waiters that may enter now are woken), else 0.
 */
export const LEAVE = `${LINE_LIB}
local refused = check_keys({1, 'hash', 2, 'zset', 3, 'zset', 4, 'zset', 5, 'hash'})
if refused then return refused end
local L, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
if not redis.call('ZSCORE', Q, ARGV[1]) then return 0 end
if ARGV[3] ~= '' then
  local w = waiter(QD, ARGV[1])
  record(KEYS[6], ARGV[3], 'host', tostring(w.host or ''), 'pid', tostring(w.pid or ''), 'cmd', tostring(w.cmd or ''),
    'waited_ms', ARGV[4], 'why', 'wait')
end
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
 * (once per window, history) KEYS[7] done mark, KEYS[8] history; ARGV[4] "1" to record the
 * release, ARGV[5] the run's exit status ("" when no command ran), ARGV[6] --once-per window ms
 * ("0": none)
 * Returns 1 when the owner held it (the exclusive hash, or one holder of --slots/--shared) and
 * its hold is deleted, the waiters that may now enter woken (unless ARGV[2] is "0"); 2 when it
 * was deleted but a PUBLISH was refused (an ACL without +publish: waiters notice by polling);
 * else 0. With exit status "0" and a window, the done mark (JSON: host, pid, cmd, fence,
 * started_ms, finished_ms) is SET first, to expire at `taken_ms` + window (server time), unless
 * that has passed. The writes come first, so an error reply means nothing was deleted.
 */
export const RELEASE = `${LINE_LIB}
local refused = check_keys({1, 'hash', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, R, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local D, H = KEYS[7], KEYS[8]
local held, exclusive
if redis.call('HGET', L, 'owner') == ARGV[1] then
  exclusive = true
  held = {}
  for _, f in ipairs({'host', 'pid', 'cmd', 'fence', 'taken_ms'}) do held[f] = redis.call('HGET', L, f) or '' end
  held.slot = '-1'
elseif redis.call('HEXISTS', L, 'h:' .. ARGV[1]) == 1 then
  held = decoded(redis.call('HGET', L, 'h:' .. ARGV[1]))
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
  redis.call('HDEL', L, 'owner', 'fence', 'host', 'pid', 'cmd', 'since_ms', 'ttl_ms', 'taken_ms', 'forced_ms')
  settle_holders(L, HX, now)
elseif exclusive then
  redis.call('DEL', L)
else
  drop_holder(L, HX, ARGV[1])
  settle_holders(L, HX, now)
end
if ARGV[4] == '1' then
  local ms = ''
  if started then ms = tostring(now - started) end
  record(H, 'released', 'host', tostring(held.host or ''), 'pid', tostring(held.pid or ''), 'cmd', tostring(held.cmd or ''),
    'fence', tostring(held.fence or ''), 'slot', tostring(held.slot or '-1'), 'exit', ARGV[5], 'held_ms', ms)
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
local refused = check_keys({1, 'hash', 2, 'counter', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
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
 * ARGV[4] wake prefix; KEYS[7] history, ARGV[5] host and ARGV[6] pid of who forces it (each
 * removed holder gets a "forced" entry); ARGV[7] the place lease ms waiters renew (a place
 * whose lease ends further ahead is not a live waiter's: dropped from the line, as are the
 * places prune_line drops)
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
local refused = check_keys({1, 'hash', 3, 'zset', 4, 'zset', 5, 'zset', 6, 'hash'})
if refused then return refused end
local L, R, HX, Q, QX, QD = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local function woken()
  redis.call('PUBLISH', R, 'force')
  if redis.call('EXISTS', Q) == 1 then wake(ARGV[4], entrants(L, HX, Q, QD)) end
end
-- The line too: places that are not a live waiter's (see prune_line, and any lease further ahead
-- than a waiter renews it) are dropped, and whoever may now enter is told.
local now = clock()
local dropped = prune_line(Q, QX, QD, now)
local ahead = redis.call('ZRANGEBYSCORE', QX, '(' .. string.format('%d', now + (tonumber(ARGV[7]) or 5000)), '+inf')
for _, w in ipairs(ahead) do drop_waiter(Q, QX, QD, w) end
if dropped + #ahead > 0 and redis.call('EXISTS', Q) == 1 then wake(ARGV[4], entrants(L, HX, Q, QD)) end
if redis.call('HEXISTS', L, 'mode') == 0 or redis.call('HEXISTS', L, 'owner') == 1 then
  local holder = redis.call('HGETALL', L)
  local pttl = redis.call('PTTL', L)
  if #holder == 0 then return {0, holder, {}} end
  local h = {}
  for i = 1, #holder, 2 do h[holder[i]] = holder[i + 1] end
  record(KEYS[7], 'forced', 'host', h.host or '', 'pid', h.pid or '', 'cmd', h.cmd or '', 'fence', h.fence or '',
    'slot', '-1', 'by_host', ARGV[5], 'by_pid', ARGV[6], 'now', tostring(ARGV[1] == 'now'))
  if ARGV[1] ~= 'now' and pttl > 0 then
    redis.call('HSET', L, 'owner', '', 'forced_ms', ARGV[2])
    return {pttl, holder, {}}
  end
  redis.call('DEL', L)
  woken()
  return {0, holder, {}}
end
prune_holders(L, HX, now)
local scored = redis.call('ZRANGE', HX, 0, -1, 'WITHSCORES')
local list, closed = {}, 0
for i = 1, #scored, 2 do
  local owner, ends = scored[i], tonumber(scored[i + 1])
  local raw = redis.call('HGET', L, 'h:' .. owner)
  local h = decoded(raw)
  if string.sub(owner, 1, 1) ~= '!' and (ARGV[3] == '' or tostring(h.slot) == ARGV[3]) then
    list[#list + 1] = raw or '{}'
    record(KEYS[7], 'forced', 'host', tostring(h.host or ''), 'pid', tostring(h.pid or ''), 'cmd', tostring(h.cmd or ''),
      'fence', tostring(h.fence or ''), 'slot', tostring(h.slot or '-1'), 'by_host', ARGV[5], 'by_pid', ARGV[6],
      'now', tostring(ARGV[1] == 'now'))
    drop_holder(L, HX, owner)
    if ARGV[1] ~= 'now' then
      h.forced_ms = ARGV[2]
      redis.call('HSET', L, 'h:!' .. owner, cjson.encode(h))
      if h.slot ~= nil and tostring(h.slot) ~= '-1' then redis.call('HSET', L, 's:' .. tostring(h.slot), '!' .. owner) end
      redis.call('ZADD', HX, ends, '!' .. owner)
      closed = math.max(closed, math.min(ends - now, 4503599627370496))
    end
  end
end
settle_holders(L, HX, now)
if ARGV[1] == 'now' and #list > 0 then woken() end
return {closed, {}, list}
`;
