-- policy.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- A Policy: several limits on one key, decided together in one call. Every
-- limit is read first, then either all of them consume the same count or
-- none does. Each limit's state is the very key and format its own
-- algorithm's script uses (counter.lua, gcra.lua, log.lua, which document
-- them): a limit keeps its state whether used alone or in a policy.
--
-- KEYS[i]  the state of limit i (see keys.go); no other key.
-- ARGV[1]  n; ARGV[2] mode: 'allow' (all n or none), 'take' (up to n) or
--          'peek'; ARGV[3] a pinned time in µs or '' (the server's TIME);
--          ARGV[4] the number of limits; then four per limit: the
--          algorithm ('l', 'c' or 'g'), capacity, and the two numbers its
--          script takes (log, counter: window in µs, 0; GCRA: unit, drain).
-- Reply:   { granted, allowed (0/1), then per limit: allowed, remaining,
--          retry-after µs, reset-after µs }
--
-- Unlike the single-limit scripts, this one builds a table per limit: a
-- policy is rarer, and one decision over mixed algorithms reads better so.
local n, mode, count = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[4])
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
end

-- floor(a / b) for integers below 2^53, corrected where the float quotient
-- rounds across an integer; ceil likewise.
local function idiv(a, b)
  local d = math.floor(a / b)
  if d * b > a then
    d = d - 1
  elseif (d + 1) * b <= a then
    d = d + 1
  end
  return d
end

local function cdiv(a, b)
  local d = idiv(a, b)
  if d * b < a then
    d = d + 1
  end
  return d
end

local function int(x)
  return string.format('%.0f', x)
end

local function width(x)
  local w = 1
  while x >= 256 ^ w do
    w = w + 1
  end
  return w
end

-- Read: every limit's stored state, and its guard time st.t (-1 if none).
local states = {}
for i = 1, count do
  local b = 4 + (i - 1) * 4
  local st = { key = KEYS[i], alg = ARGV[b + 1], cap = tonumber(ARGV[b + 2]),
    a = tonumber(ARGV[b + 3]), b = tonumber(ARGV[b + 4]), t = -1 }
  if st.alg == 'l' then
    local newest = redis.call('ZRANGE', st.key, -1, -1, 'WITHSCORES')
    if newest[1] then
      st.last, st.score = newest[1], tonumber(newest[2])
      st.t, st.base = st.score, st.last
      local at = string.find(st.last, '~', 1, true)
      if at then
        st.t = math.max(st.score, tonumber(string.sub(st.last, at + 1)))
        st.base = string.sub(st.last, 1, at - 1)
      end
    end
  else
    local v = redis.call('GET', st.key)
    if v then
      if st.alg == 'c' then
        local f = 'I' .. (#v - 7) / 2
        st.fmt = '>I7' .. f .. f
        st.t, st.c, st.p = struct.unpack(st.fmt, v)
      else
        st.fmt = '>I7I' .. (#v - 7)
        st.t, st.q = struct.unpack(st.fmt, v)
      end
    end
  end
  -- Time on a key never goes back: the call uses the latest of the clock
  -- and every limit's guard.
  if st.t > now then
    now = st.t
  end
  states[i] = st
end

-- The counter's weighted availability at time at, for a state rebased on
-- now (st.cur, st.prev, st.start: now's bucket).
local function counter_avail(st, at)
  local win, cur, prev, el = st.a, 0, 0, 0
  if at < st.start + win then
    cur, prev, el = st.cur, st.prev, at - st.start
  elseif at < st.start + 2 * win then
    prev, el = st.cur, at - st.start - win
  end
  return math.max(math.floor(st.cap - prev * (win - el) / win - cur + math.min(1e-9, 0.5 / win)), 0)
end

-- Load: each limit's availability at now.
local avail = math.huge
for i = 1, count do
  local st = states[i]
  if st.alg == 'l' then
    st.floor, st.count = now - st.a, 0
    if st.last then
      st.count = redis.call('ZCOUNT', st.key, '(' .. int(st.floor), '+inf')
    end
    st.avail = math.max(st.cap - st.count, 0)
  elseif st.alg == 'c' then
    local win = st.a
    local e = now - math.floor(now / win) * win
    if e < 0 then
      e = e + win
    elseif e >= win then
      e = e - win
    end
    st.start, st.cur, st.prev = now - e, 0, 0
    if st.t >= st.start then
      st.cur, st.prev = st.c, st.p
    elseif st.t >= st.start - win then
      st.prev = st.c
    end
    st.avail = counter_avail(st, now)
  else
    st.qnow = 0
    if st.q then
      st.qnow = math.max(st.q - (now - st.t) * st.b, 0)
    end
    st.avail = math.max(idiv(st.cap * st.a - st.qnow, st.a), 0)
  end
  if st.avail < avail then
    avail = st.avail
  end
end

local granted = 0
if mode == 'take' then
  granted = math.min(n, avail)
elseif mode == 'allow' and avail >= n then
  granted = n
end
local need = n
if mode == 'take' then
  need = 1
end
local allowed = 0
if granted > 0 or (mode == 'peek' and avail >= n) then
  allowed = 1
end

-- Consume k on st, write it with a TTL; returns remaining, reset-after.
local function apply(st, k)
  if st.alg == 'l' then
    redis.call('ZREMRANGEBYSCORE', st.key, '-inf', int(st.floor))
    if st.last and st.base ~= st.last and st.score > st.floor then
      redis.call('ZREM', st.key, st.last)
      redis.call('ZADD', st.key, int(st.score), st.base)
    end
    local win, at = st.a, int(now)
    local r = now - math.floor(now / win) * win
    if r < 0 then
      r = r + win
    elseif r >= win then
      r = r - win
    end
    local name = r * st.cap + st.count
    local args = {}
    for c = 0, k - 1 do
      args[#args + 1] = at
      args[#args + 1] = int(name + c)
      if #args >= 1000 then
        redis.call('ZADD', st.key, unpack(args))
        args = {}
      end
    end
    if #args > 0 then
      redis.call('ZADD', st.key, unpack(args))
    end
    redis.call('PEXPIRE', st.key, math.ceil(win / 1000))
    return st.avail - k, win
  elseif st.alg == 'c' then
    st.cur = st.cur + k
    local w = width(math.max(st.cur, st.prev))
    local reset = 2 * st.a - (now - st.start)
    redis.call('SET', st.key, struct.pack('>I7I' .. w .. 'I' .. w, now, st.cur, st.prev), 'PX', math.ceil(reset / 1000))
    return counter_avail(st, now), reset
  end
  local q = st.qnow + k * st.a
  local reset = cdiv(q, st.b)
  redis.call('SET', st.key, struct.pack('>I7I' .. width(q), now, q), 'PX', math.ceil(reset / 1000))
  return st.avail - k, reset
end

-- Microseconds until need are free on st, and until all are.
local function waits(st)
  if st.alg == 'l' then
    local reset = 0
    if st.count > 0 then
      reset = math.max(st.score + st.a - now, 0)
    end
    if st.avail >= need then
      return 0, reset
    end
    local r = redis.call('ZRANGEBYSCORE', st.key, '(' .. int(st.floor), '+inf', 'WITHSCORES', 'LIMIT', st.count - st.cap + need - 1, 1)
    return tonumber(r[2]) + st.a - now, reset
  elseif st.alg == 'c' then
    local win, e = st.a, now - st.start
    local reset = 0
    if st.cur > 0 then
      reset = 2 * win - e
    elseif st.prev > 0 then
      reset = win - e
    end
    if st.avail >= need then
      return 0, reset
    end
    local target, d = st.cap - need, 0
    if st.cur > target then
      d = (win - e) + win - target * win / st.cur
    elseif st.prev > 0 then
      d = win - (target - st.cur) * win / st.prev - e
    end
    d = math.max(math.ceil(d), 0)
    for _ = 1, 64 do
      if counter_avail(st, now + d) >= need then
        break
      end
      d = d + 1
    end
    return d, reset
  end
  local reset = cdiv(st.qnow, st.b)
  if st.avail >= need then
    return 0, reset
  end
  return cdiv(st.qnow - (st.cap - need) * st.a, st.b), reset
end

-- A rejection consumes nothing, but the time it was decided at is the
-- latest this key has seen: keep it (as each algorithm's script does).
local function touch(st)
  if st.alg == 'l' then
    if st.count > 0 then
      redis.call('ZADD', st.key, int(st.score), st.base .. '~' .. int(now))
      redis.call('ZREM', st.key, st.last)
    end
  elseif st.alg == 'c' then
    if st.cur + st.prev > 0 then
      redis.call('SET', st.key, struct.pack(st.fmt, now, st.cur, st.prev), 'KEEPTTL')
    end
  elseif st.qnow > 0 then
    redis.call('SET', st.key, struct.pack(st.fmt, now, st.qnow), 'KEEPTTL')
  end
end

local out = { granted, allowed }
for i = 1, count do
  local st = states[i]
  local j = 2 + (i - 1) * 4
  if granted > 0 then
    local remaining, reset = apply(st, granted)
    out[j + 1], out[j + 2], out[j + 3], out[j + 4] = 1, remaining, 0, reset
  else
    local ok = 0
    if st.avail >= need then
      ok = 1
    end
    local retry, reset = waits(st)
    out[j + 1], out[j + 2], out[j + 3], out[j + 4] = ok, st.avail, retry, reset
    if mode ~= 'peek' and now > st.t then
      touch(st)
    end
  end
end
return out
