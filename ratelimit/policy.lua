-- policy.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- A Policy: several limits on one key, decided together in one call. Every
-- limit is read first, then either all of them consume the same count or
-- none does. Each limit's state is the very key and format its own
-- algorithm's script uses (counter.lua, gcra.lua, log.lua, which document
-- them and whose arithmetic is repeated here, line for line): a limit keeps
-- its state whether used alone or in a policy.
--
-- KEYS[i]  the state of limit i (see keys.go); no other key.
-- ARGV[1]  n; ARGV[2] mode: 'allow' (all n or none), 'take' (up to n) or
--          'peek'; ARGV[3] a pinned time in µs or '' (the server's TIME);
--          ARGV[3 + i] limit i: its algorithm's letter ('l', 'c' or 'g')
--          then capacity and the two numbers its script takes (log,
--          counter: window in µs, 0; GCRA: unit, drain) packed big-endian
--          in 8 bytes each, as the single-limit scripts take them.
-- Reply:   granted, allowed (0/1), then per limit: allowed, remaining,
--          retry-after µs, reset-after µs; packed big-endian in 8 bytes
--          each, as the single-limit scripts reply.
--
-- Flat on purpose, like the single-limit scripts: three loops over the
-- limits (read, weigh, write) with each algorithm written out inline, no
-- function built per call, one table s for what a limit carries from loop
-- to loop.
local n, mode, count = tonumber(ARGV[1]), ARGV[2], #KEYS
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
end

-- s holds ten slots per limit i, from k = 10(i - 1):
--   k+1 t, the guard: the latest time the limit was decided at (-1: none)
--   k+2 log: the newest member's score; counter: c, then cur; GCRA: q
--   k+3 log: the newest member's name (false: none); counter: p, then prev
--   k+4 log: that name without the guard; counter, GCRA: the stored
--       format (false: no state)
--   k+5 log: the live count; counter: the start of now's bucket
--   k+6 the limit's availability at now
--   k+7 to k+10 its algorithm (the letter's byte), capacity, and two numbers
local s = {}

-- Read: every limit's state and guard.
for i = 1, count do
  local arg = ARGV[3 + i]
  local alg, t, x, y, z = string.byte(arg), -1, 0, false, false
  local k = 10 * (i - 1)
  s[k + 8], s[k + 9], s[k + 10] = struct.unpack('>I8I8I8', arg, 2)
  s[k + 7] = alg
  if alg == 108 then -- 'l'
    local newest = redis.call('ZRANGE', KEYS[i], '-1', '-1', 'WITHSCORES')
    if newest[1] then
      y, x = newest[1], tonumber(newest[2])
      t, z = x, y
      local at = string.find(y, '~', 1, true)
      if at then
        t, z = math.max(x, tonumber(string.sub(y, at + 1))), string.sub(y, 1, at - 1)
      end
    end
  else
    -- GET, not one MGET of all keys: the states MGET read make the next
    -- SET store its value in a larger allocation (MEMORY USAGE 104 B per
    -- GCRA key instead of 88, Redis 7.0).
    local v = redis.call('GET', KEYS[i])
    y = 0
    if v then
      if alg == 99 then -- 'c'
        local f = 'I' .. (#v - 7) / 2
        z = '>I7' .. f .. f
        t, x, y = struct.unpack(z, v)
      else
        z = '>I7I' .. (#v - 7)
        t, x = struct.unpack(z, v)
      end
    end
  end
  -- Time on a key never goes back: the call uses the latest of the clock
  -- and every limit's guard.
  if t > now then
    now = t
  end
  s[k + 1], s[k + 2], s[k + 3], s[k + 4] = t, x, y, z
end

-- Weigh: each limit's availability at now, and the least of them.
local avail = math.huge
for i = 1, count do
  local k = 10 * (i - 1)
  local alg, cap, a = s[k + 7], s[k + 8], s[k + 9]
  local av
  if alg == 108 then
    local c = 0
    if s[k + 3] then
      c = redis.call('ZCOUNT', KEYS[i], '(' .. string.format('%d', now - a), '+inf')
    end
    s[k + 5] = c
    av = math.max(cap - c, 0)
  elseif alg == 99 then
    local e = now - math.floor(now / a) * a -- elapsed in now's bucket; the float quotient may round:
    if e < 0 then
      e = e + a
    elseif e >= a then
      e = e - a
    end
    local t, cur, prev = s[k + 1], 0, 0
    if t >= now - e then
      cur, prev = s[k + 2], s[k + 3]
    elseif t >= now - e - a then
      prev = s[k + 2]
    end
    s[k + 2], s[k + 3], s[k + 5] = cur, prev, now - e
    av = math.max(math.floor(cap - prev * (a - e) / a - cur + math.min(1e-9, 0.5 / a)), 0)
  else
    -- The backlog drained since t (none stored: t = -1, q = 0, so 0).
    local q = math.max(s[k + 2] - (now - s[k + 1]) * s[k + 10], 0)
    s[k + 2] = q
    local room = cap * a - q
    av = math.floor(room / a)
    if av * a > room then
      av = av - 1
    elseif (av + 1) * a <= room then
      av = av + 1
    end
    av = math.max(av, 0)
  end
  s[k + 6] = av
  if av < avail then
    avail = av
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
local out = { granted, allowed }
for i = 1, count do
  local k, key = 10 * (i - 1), KEYS[i]
  local alg, cap, a = s[k + 7], s[k + 8], s[k + 9]
  local t, x, y, av = s[k + 1], s[k + 2], s[k + 3], s[k + 6]
  local ok, left, retry, reset = 1, av, 0, 0
  if alg == 108 then
    local c, floor = s[k + 5], string.format('%d', now - a)
    if granted > 0 then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', floor)
      if y and s[k + 4] ~= y and x > now - a then
        -- The guard moves to the new members: give the renamed one its name back.
        redis.call('ZREM', key, y)
        redis.call('ZADD', key, string.format('%d', x), s[k + 4])
      end
      local at = string.format('%d', now)
      local r = now - math.floor(now / a) * a -- now mod window, exact:
      if r < 0 then r = r + a elseif r >= a then r = r - a end -- the float quotient may round
      local name = r * cap + c
      if granted == 1 then
        redis.call('ZADD', key, at, string.format('%d', name))
      else
        local args = {}
        for m = 0, granted - 1 do
          args[#args + 1] = at
          args[#args + 1] = string.format('%d', name + m)
          if #args >= 1000 then
            redis.call('ZADD', key, unpack(args))
            args = {}
          end
        end
        if #args > 0 then
          redis.call('ZADD', key, unpack(args))
        end
      end
      redis.call('PEXPIRE', key, string.format('%d', math.ceil(a / 1000)))
      left, reset = av - granted, a
    else
      if c > 0 then
        reset = math.max(x + a - now, 0)
      end
      if av < need then
        -- Wait until enough of the oldest live members age out.
        ok = 0
        local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. floor, '+inf', 'WITHSCORES', 'LIMIT', string.format('%d', c - cap + need - 1), '1')
        retry = tonumber(oldest[2]) + a - now
      end
      if touch and now > t and c > 0 then
        -- Add before removing: removing the only member first would delete
        -- the key, and the ZADD would make a new one without a TTL.
        redis.call('ZADD', key, string.format('%d', x), s[k + 4] .. '~' .. string.format('%d', now))
        redis.call('ZREM', key, y)
      end
    end
  elseif alg == 99 then
    local start = s[k + 5]
    local e, eps = now - start, math.min(1e-9, 0.5 / a)
    if granted > 0 then
      x = x + granted
      local w, m = 1, math.max(x, y)
      while m >= 256 ^ w do
        w = w + 1
      end
      -- The key lives until the state is empty: cur leaves the window after the next bucket.
      reset = 2 * a - e
      redis.call('SET', key, struct.pack('>I7I' .. w .. 'I' .. w, now, x, y), 'PX', math.ceil(reset / 1000))
      left = math.max(math.floor(cap - y * (a - e) / a - x + eps), 0)
    else
      if x > 0 then
        reset = 2 * a - e
      elseif y > 0 then
        reset = a - e
      end
      if av < need then
        -- The wait: a closed-form guess, then corrected by a µs or two for
        -- float rounding, so a client waiting exactly that is admitted.
        ok = 0
        local target, d = cap - need, 0
        if x > target then
          d = (a - e) + a - target * a / x
        elseif y > 0 then
          d = a - (target - x) * a / y - e
        end
        d = math.max(math.ceil(d), 0)
        for _ = 1, 64 do
          local at = now + d
          local ce, pe, el = 0, 0, 0 -- counts and elapsed in at's bucket
          if at < start + a then
            ce, pe, el = x, y, at - start
          elseif at < start + 2 * a then
            pe, el = x, at - start - a
          end
          if math.floor(cap - pe * (a - el) / a - ce + eps) >= need then
            break
          end
          d = d + 1
        end
        retry = d
      end
      if touch and now > t and x + y > 0 then
        -- Rebased on now the counts only shrank: the stored width and TTL fit.
        redis.call('SET', key, struct.pack(s[k + 4], now, x, y), 'KEEPTTL')
      end
    end
  else
    local drain = s[k + 10]
    if granted > 0 then
      x = x + granted * a
      left = av - granted
    end
    -- reset = ceil(x / drain): when the backlog is empty
    reset = math.floor(x / drain)
    if reset * drain > x then
      reset = reset - 1
    elseif (reset + 1) * drain <= x then
      reset = reset + 1
    end
    if reset * drain < x then
      reset = reset + 1
    end
    if granted > 0 then
      local w = 1
      while x >= 256 ^ w do
        w = w + 1
      end
      redis.call('SET', key, struct.pack('>I7I' .. w, now, x), 'PX', math.ceil(reset / 1000))
    else
      if av < need then
        -- The backlog must fall to what leaves room for need: ceil(excess / drain).
        ok = 0
        local excess = x - (cap - need) * a
        local d = math.floor(excess / drain)
        if d * drain > excess then
          d = d - 1
        elseif (d + 1) * drain <= excess then
          d = d + 1
        end
        if d * drain < excess then
          d = d + 1
        end
        retry = d
      end
      if touch and now > t and x > 0 then
        -- The backlog only drained: the stored width and TTL fit.
        redis.call('SET', key, struct.pack(s[k + 4], now, x), 'KEEPTTL')
      end
    end
  end
  local j = 4 * i - 2
  out[j + 1], out[j + 2], out[j + 3], out[j + 4] = ok, left, retry, reset
end
return struct.pack('>' .. string.rep('i8', #out), unpack(out))
