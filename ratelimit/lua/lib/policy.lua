-- A Policy's decision (policy.lua documents its arguments and reply), from
-- KEYS and ARGV as policy.lua's call has them, with read (lib/read.lua)
-- for its reads. It returns the reply, packed, the time it decided at and
-- its limits (a script's call replies the first only), or an error reply.
local n, mode = tonumber(ARGV[1]), ARGV[2]
--#include lib/clock.lua

-- Read: every limit's state and guard, the latest time it was decided at
-- (-1: none). A limit L is a table built whole, in one allocation, with
-- its algorithm's fields only (a table of every algorithm's fields cost
-- the server 7,000 instructions a limit, one of eight 3,200):
--   all      alg ('l', 'c', 'g'), cap, a, b (its numbers), guard, avail
--   log      win = a; last, the newest member's name (false: none), score,
--            its score, base, the name without the guard; count, the live
--            members; floor, the window's start as text; first, the first
--            new member's name when it admits (reserve.lua records it)
--   counter  win = a; c, p, the stored counts; fmt, their format; cur,
--            prev, the counts at now; start, now's bucket's start
--   GCRA     unit = a, drain = b; q, the backlog (drained to now); fmt
local ls, m = {}, #KEYS
for i = 1, m do
  local alg, cap, a, b = struct.unpack('>c1I8I8I8', ARGV[3 + i])
  local L
  if alg == 'l' then
    local newest, err = read('ZRANGE', KEYS[i], '-1', '-1', 'WITHSCORES')
    if err then
      return redis.error_reply(err)
    end
    local last, score, base, guard = newest[1] or false, 0, false, -1
    if last then
      score = tonumber(newest[2])
      --#include lib/logguard.lua
    end
    L = { alg = alg, cap = cap, a = a, guard = guard, avail = 0, last = last, score = score, base = base,
      count = 0, floor = false, first = 0 }
  else
    -- GET, not one MGET of all keys: the states MGET read make the next
    -- SET store its value in a larger allocation (MEMORY USAGE 104 B per
    -- GCRA key instead of 88, Redis 7.0).
    local v, err = read('GET', KEYS[i])
    if err then
      return redis.error_reply(err)
    end
    if alg == 'c' then
      local t, c, p, fmt = -1, 0, 0, false
      if v then
        --#include lib/counterdecode.lua
      end
      L = { alg = alg, cap = cap, a = a, guard = t, avail = 0, c = c, p = p, fmt = fmt, cur = 0, prev = 0, start = 0 }
    else
      local t, q, fmt = -1, 0, false
      if v then
        --#include lib/gcradecode.lua
      end
      L = { alg = alg, cap = cap, a = a, b = b, guard = t, avail = 0, q = q, fmt = fmt }
    end
  end
  -- Time on a key never goes back: the call uses the latest of the clock
  -- and every limit's guard.
  if L.guard > now then
    now = L.guard
  end
  ls[i] = L
end

-- Weigh: each limit's availability at now, and the least of them.
local avail = math.huge
for i = 1, m do
  local L = ls[i]
  if L.alg == 'l' then
    local win = L.a
    L.floor = string.format('%d', now - win) -- the window's start, as text
    if L.last then
      L.count = redis.call('ZCOUNT', KEYS[i], '(' .. L.floor, '+inf')
    end
    L.avail = math.max(L.cap - L.count, 0)
  elseif L.alg == 'c' then
    local win = L.a
    --#include lib/bucket.lua
    local start, cur, prev, t, c, p = now - e, 0, 0, L.guard, L.c, L.p
    --#include lib/countercounts.lua
    L.start, L.cur, L.prev = start, cur, prev
    local eps = math.min(1e-9, 0.5 / win)
    L.avail = math.max(math.floor(L.cap - prev * (win - e) / win - cur + eps), 0)
  else
    local unit, drain = L.a, L.b
    L.q = math.max(L.q - (now - L.guard) * drain, 0) -- none stored: guard -1, q 0, so 0
    -- avail = floor((cap·unit - q) / unit), at least 0
    local room = L.cap * unit - L.q
    --#include lib/floordiv.lua quo=av num=room den=unit
    L.avail = math.max(av, 0)
  end
  if L.avail < avail then
    avail = L.avail
  end
end

local granted, need = 0, n
if mode == 'take' then
  granted, need = math.min(n, avail), 1
elseif mode == 'allow' and avail >= n then
  granted = n
end
local allowed = 0
if granted > 0 or (mode == 'peek' and avail >= n) then
  allowed = 1
end
-- A rejection consumes nothing, but the time it was decided at is the
-- latest each key has seen: keep it (as each algorithm's script does).
local touch = granted == 0 and mode ~= 'peek'

-- Write: consume granted on every limit with a TTL, or on a rejection
-- compute each limit's wait and keep its guard.
local out = struct.pack('>i8i8', granted, allowed)
for i = 1, m do
  local L = ls[i]
  local key, cap = KEYS[i], L.cap
  local ok, left, retry, reset = 1, L.avail, 0, 0
  if L.alg == 'l' then
    local win, count, floor = L.a, L.count, L.floor
    if granted > 0 then
      local last, base, score = L.last, L.base, L.score
      --#include lib/logadd.lua
      L.first = name
      left, reset = L.avail - granted, win
    else
      if count > 0 then
        reset = math.max(L.score + win - now, 0)
      end
      if L.avail < need then
        -- Wait until enough of the oldest live members age out (lib/log.lua).
        ok = 0
        local at = string.format('%d', need - cap - 1)
        retry = tonumber(redis.call('ZRANGE', key, at, at, 'WITHSCORES')[2]) + win - now
      end
      if touch and now > L.guard and count > 0 then
        -- Add before removing: removing the only member first would delete
        -- the key, and the ZADD would make a new one without a TTL.
        redis.call('ZADD', key, string.format('%d', L.score), L.base .. '~' .. string.format('%d', now))
        redis.call('ZREM', key, L.last)
      end
    end
  elseif L.alg == 'c' then
    local win, start, cur, prev = L.a, L.start, L.cur, L.prev
    local e, eps = now - start, math.min(1e-9, 0.5 / win)
    if granted > 0 then
      --#include lib/counterstore.lua
      left = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)
    else
      if cur > 0 then
        reset = 2 * win - e
      elseif prev > 0 then
        reset = win - e
      end
      if L.avail < need then
        ok = 0
        --#include lib/counterwait.lua
        retry = d
      end
      if touch and now > L.guard and cur + prev > 0 then
        -- Rebased on now the counts only shrank: the stored width and TTL fit.
        redis.call('SET', key, struct.pack(L.fmt, now, cur, prev), 'KEEPTTL')
      end
    end
  else
    local unit, drain, q = L.a, L.b, L.q
    if granted > 0 then
      q = q + granted * unit
      left = L.avail - granted
    end
    --#include lib/ceildiv.lua quo=empty num=q den=drain
    reset = empty -- when the backlog is empty
    if granted > 0 then
      --#include lib/gcrastore.lua
    else
      if L.avail < need then
        ok = 0
        --#include lib/gcrawait.lua
        retry = d
      end
      if touch and now > L.guard and q > 0 then
        -- The backlog only drained: the stored width and TTL fit.
        redis.call('SET', key, struct.pack(L.fmt, now, q), 'KEEPTTL')
      end
    end
  end
  out = out .. struct.pack('>i8i8i8i8', ok, left, retry, reset)
end
return out, now, ls
