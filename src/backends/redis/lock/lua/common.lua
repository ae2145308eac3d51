-- common.lua, prefixed to every script (scripts.ts): the Lua that several scripts share.
--
-- check_keys({i, kind, …}) asks each KEYS[i] with a read of its kind (commands dlock's ACL grants
-- already) before the script writes anything, so a key of the wrong type (or a fence counter that
-- is not one) fails the call with nothing changed: "WRONGTYPE dlock KEYS[i] <kind>" (foreign.ts
-- names the key). Kinds: hash, zset, string, counter (a string holding an integer from 0 that INCR
-- can raise). Other errors (an ACL that denies the read) are passed on as they are. A missing key
-- is fine.
--
-- clock() is the server's time; raise_counter(key, n) raises a fence counter; write_holder(key, ttl,
-- …) writes an exclusive holder's hash with its expiry, or nothing.

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
-- The server's time in ms (TIME): hosts' clocks never matter.
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Raise the counter at `key` to at least `n` (a decimal string; a missing counter is 0). Compares
-- decimal strings by length then digits, so counters past 2^53 stay exact.
local function raise_counter(key, n)
  local current = redis.call('GET', key) or '0'
  if #current < #n or (#current == #n and current < n) then
    redis.call('SET', key, n)
  end
end
-- Write an exclusive holder's hash at `key` (the field/value pairs `...`) and its expiry of `ttl`
-- ms. A script stopped half-way keeps its writes: never leave a lock without an expiry behind
-- (e.g. an ACL that denies PEXPIRE). Returns nil, or the error with the hash undone (deleted).
local function write_holder(key, ttl, ...)
  redis.call('HSET', key, ...)
  local expired = redis.pcall('PEXPIRE', key, ttl)
  if type(expired) == 'table' and expired.err then
    redis.pcall('DEL', key)
    return expired
  end
end
