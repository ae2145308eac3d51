-- totals.lua: a key's counts for all time (dlock metrics' counters), in the hash KEYS' totals
-- (keys.ts; same hash tag, never expires, never deleted by dlock). Prefixed with LIMITS and common.lua.
-- tally(T, event, field, value, ...) is called with each history entry (line-lib's record, extend.lua)
-- and adds to it with HINCRBY, best effort as the history is: a write the server refuses (an ACL
-- without +hincrby, a foreign key there, a forged field that is not an integer) changes nothing
-- else. Fields:
--   acquired                              turned_away:held|line|wait|done|superseded|other
--   released:ok|error|cannot_run|signal|lost|unknown|none|other
--   lost:expired|forced|taken|other       forced
--   wait:count, wait:sum_ms, wait:le:<ms> (each bucket of WAIT_BUCKETS_MS the wait fits in)
--   hold:count, hold:sum_ms, hold:le:<ms> (the same of held_ms, HOLD_BUCKETS_MS)
--   last_success_ms                       server time of the last release with exit status 0

local function exit_class(exit)
  if exit == nil or exit == '' then return 'none' end
  if exit == 'lost' or exit == 'unknown' then return exit end
  if not string.match(exit, '^%d+$') or #exit > 3 then return 'other' end
  local code = tonumber(exit)
  if code == 0 then return 'ok' elseif code <= 125 then return 'error' elseif code <= 127 then return 'cannot_run'
  elseif code <= 255 then return 'signal' end
  return 'other'
end
local function one_of(value, known)
  for _, k in ipairs(known) do if value == k then return value end end
  return 'other'
end
local function observe(T, name, ms, buckets)
  if type(ms) ~= 'string' or not string.match(ms, '^%d+$') or #ms > 16 then return end
  local value = tonumber(ms)
  if value > MAX_OBSERVED_MS then return end
  redis.pcall('HINCRBY', T, name .. ':count', 1)
  redis.pcall('HINCRBY', T, name .. ':sum_ms', value)
  for _, bound in ipairs(buckets) do
    if value <= bound then redis.pcall('HINCRBY', T, name .. ':le:' .. bound, 1) end
  end
end
local function tally(T, event, ...)
  local f, args = {}, {...}
  for i = 1, #args - 1, 2 do f[args[i]] = args[i + 1] end
  if event == 'acquired' then
    redis.pcall('HINCRBY', T, 'acquired', 1)
    observe(T, 'wait', f.waited_ms, WAIT_BUCKETS_MS)
  elseif event == 'released' then
    local class = exit_class(f.exit)
    redis.pcall('HINCRBY', T, 'released:' .. class, 1)
    observe(T, 'hold', f.held_ms, HOLD_BUCKETS_MS)
    if class == 'ok' then
      redis.pcall('HSET', T, 'last_success_ms', tostring(clock()))
    end
  elseif event == 'busy' then
    redis.pcall('HINCRBY', T, 'turned_away:' .. one_of(f.why, {'held', 'line', 'wait'}), 1)
  elseif event == 'done' or event == 'superseded' then
    redis.pcall('HINCRBY', T, 'turned_away:' .. event, 1)
  elseif event == 'lost' then
    redis.pcall('HINCRBY', T, 'lost:' .. one_of(f.why, {'expired', 'forced', 'taken'}), 1)
  elseif event == 'forced' then
    redis.pcall('HINCRBY', T, 'forced', 1)
  end
end
