-- policy.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- A Policy: several limits on one key, decided together in one call. Every
-- limit is read first, then either all of them consume the same count or
-- none does. Each limit's state is the very key and format its own
-- algorithm's script uses (log.lua, counter.lua, gcra.lua, which document
-- them): a limit keeps its state whether used alone or in a policy. Their
-- arithmetic is repeated here with the same names, formula for formula,
-- and TestPolicyLimitDisagreesWithItsOwnScript holds the two to the same
-- answers.
--
-- KEYS     the state of each limit.
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then per
--          limit its letter, capacity and two numbers (log, counter: the
--          window in µs and 0; GCRA: unit and drain).
-- Reply:   every script's (wire.go): granted, allowed, then per limit
--          allowed, remaining, retry-after µs and reset-after µs.
--
-- Three loops over the limits (read, weigh, write), each algorithm written
-- out inline, and one table per limit, built whole with every field it
-- will hold (one allocation; no function built per call).
local n, mode = tonumber(ARGV[1]), ARGV[2]
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
end

-- read(...), for the first read of a key, before anything is written: a
-- redis.pcall that answers TRYAGAIN where a key expired in a slot being
-- migrated (readFunction in scripts.go, which puts it on line 2).

-- Read: every limit's state and guard, the latest time it was decided at
-- (-1: none). The fields of a limit L, by algorithm:
--   all      alg ('l', 'c', 'g'), cap, a, b (its numbers), guard, avail
--   log      win = a; last, the newest member's name (false: none), score,
--            its score, base, the name without the guard; count, the live
--            members
--   counter  win = a; c, p, the stored counts; fmt, their format; cur,
--            prev, the counts at now; start, now's bucket's start
--   GCRA     unit = a, drain = b; q, the backlog (drained to now); fmt
local ls = {}
for i = 1, #KEYS do
  local alg, cap, a, b = struct.unpack('>c1I8I8I8', ARGV[3 + i])
  local L = { alg = alg, cap = cap, a = a, b = b, guard = -1, avail = 0, last = false, score = 0, base = false,
    count = 0, c = 0, p = 0, fmt = false, cur = 0, prev = 0, start = 0, q = 0 }
  if alg == 'l' then
    local newest, err = read('ZRANGE', KEYS[i], '-1', '-1', 'WITHSCORES')
    if err then
      return redis.error_reply(err)
    end
    if newest[1] then
      L.last, L.score = newest[1], tonumber(newest[2])
      L.guard, L.base = L.score, L.last
      local at = string.find(L.last, '~', 1, true)
      if at then
        L.guard, L.base = math.max(L.score, tonumber(string.sub(L.last, at + 1))), string.sub(L.last, 1, at - 1)
      end
    end
  else
    -- GET, not one MGET of all keys: the states MGET read make the next
    -- SET store its value in a larger allocation (MEMORY USAGE 104 B per
    -- GCRA key instead of 88, Redis 7.0).
    local v, err = read('GET', KEYS[i])
    if err then
      return redis.error_reply(err)
    end
    if v and alg == 'c' then
      local f = 'I' .. (#v - 7) / 2
      L.fmt = '>I7' .. f .. f
      L.guard, L.c, L.p = struct.unpack(L.fmt, v)
    elseif v then
      L.fmt = '>I7I' .. (#v - 7)
      L.guard, L.q = struct.unpack(L.fmt, v)
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
for i, L in ipairs(ls) do
  if L.alg == 'l' then
    local win = L.a
    if L.last then
      L.count = redis.call('ZCOUNT', KEYS[i], '(' .. string.format('%d', now - win), '+inf')
    end
    L.avail = math.max(L.cap - L.count, 0)
  elseif L.alg == 'c' then
    local win = L.a
    local e = now - math.floor(now / win) * win -- elapsed in now's bucket; the float quotient may round:
    if e < 0 then
      e = e + win
    elseif e >= win then
      e = e - win
    end
    L.start = now - e
    if L.guard >= L.start then
      L.cur, L.prev = L.c, L.p
    elseif L.guard >= L.start - win then
      L.prev = L.c
    end
    local eps = math.min(1e-9, 0.5 / win)
    L.avail = math.max(math.floor(L.cap - L.prev * (win - e) / win - L.cur + eps), 0)
  else
    local unit, drain = L.a, L.b
    L.q = math.max(L.q - (now - L.guard) * drain, 0) -- none stored: guard -1, q 0, so 0
    -- avail = floor((cap·unit - q) / unit), at least 0
    local room = L.cap * unit - L.q
    local av = math.floor(room / unit)
    if av * unit > room then
      av = av - 1
    elseif (av + 1) * unit <= room then
      av = av + 1
    end
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
local out = { granted, allowed }
for i, L in ipairs(ls) do
  local key, cap = KEYS[i], L.cap
  local ok, left, retry, reset = 1, L.avail, 0, 0
  if L.alg == 'l' then
    local win, count = L.a, L.count
    local floor = string.format('%d', now - win)
    if granted > 0 then
      -- Adds before removals, as in log.lua: an emptied set is a deleted
      -- key, which a write after it may not touch in a migrating slot.
      if L.base ~= L.last and L.score > now - win then
        -- The guard moves to the new members: give the renamed one its name back.
        redis.call('ZADD', key, string.format('%d', L.score), L.base)
        redis.call('ZREM', key, L.last)
      end
      local at = string.format('%d', now)
      local r = now - math.floor(now / win) * win -- now mod win, exact:
      if r < 0 then r = r + win elseif r >= win then r = r - win end -- the float quotient may round
      local name = r * cap + count -- the name of c = count + 1
      if granted == 1 then
        redis.call('ZADD', key, at, string.format('%d', name))
      else
        local args = {}
        for c = 0, granted - 1 do
          args[#args + 1] = at
          args[#args + 1] = string.format('%d', name + c)
          if #args >= 1000 then
            redis.call('ZADD', key, unpack(args))
            args = {}
          end
        end
        if #args > 0 then
          redis.call('ZADD', key, unpack(args))
        end
      end
      redis.call('ZREMRANGEBYSCORE', key, '-inf', floor)
      redis.call('PEXPIRE', key, string.format('%d', math.ceil(win / 1000)))
      left, reset = L.avail - granted, win
    else
      if count > 0 then
        reset = math.max(L.score + win - now, 0)
      end
      if L.avail < need then
        -- Wait until enough of the oldest live members age out.
        ok = 0
        local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. floor, '+inf', 'WITHSCORES', 'LIMIT', string.format('%d', count - cap + need - 1), '1')
        retry = tonumber(oldest[2]) + win - now
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
      cur = cur + granted
      local w, m = 1, math.max(cur, prev)
      while m >= 256 ^ w do
        w = w + 1
      end
      -- The key lives until the state is empty: cur leaves the window after the next bucket.
      reset = 2 * win - e
      redis.call('SET', key, struct.pack('>I7I' .. w .. 'I' .. w, now, cur, prev), 'PX', math.ceil(reset / 1000))
      left = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)
    else
      if cur > 0 then
        reset = 2 * win - e
      elseif prev > 0 then
        reset = win - e
      end
      if L.avail < need then
        -- The wait: a closed-form guess, then corrected by a µs or two for
        -- float rounding, so a client waiting exactly that is admitted.
        ok = 0
        local target, d = cap - need, 0 -- the weighted count must fall to target
        if cur > target then
          d = (win - e) + win - target * win / cur -- this bucket becomes the weighted one
        elseif prev > 0 then
          d = win - (target - cur) * win / prev - e -- prev's weight only has to shrink
        end
        d = math.max(math.ceil(d), 0)
        for _ = 1, 64 do
          local at = now + d
          local ce, pe, el = 0, 0, 0 -- counts and elapsed in at's bucket
          if at < start + win then
            ce, pe, el = cur, prev, at - start
          elseif at < start + 2 * win then
            pe, el = cur, at - start - win
          end
          if math.floor(cap - pe * (win - el) / win - ce + eps) >= need then
            break
          end
          d = d + 1
        end
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
    -- reset = ceil(q / drain): when the backlog is empty
    reset = math.floor(q / drain)
    if reset * drain > q then
      reset = reset - 1
    elseif (reset + 1) * drain <= q then
      reset = reset + 1
    end
    if reset * drain < q then
      reset = reset + 1
    end
    if granted > 0 then
      local w = 1
      while q >= 256 ^ w do
        w = w + 1
      end
      redis.call('SET', key, struct.pack('>I7I' .. w, now, q), 'PX', math.ceil(reset / 1000))
    else
      if L.avail < need then
        -- The backlog must fall to what leaves room for need: ceil(excess / drain).
        ok = 0
        local excess = q - (cap - need) * unit
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
      if touch and now > L.guard and q > 0 then
        -- The backlog only drained: the stored width and TTL fit.
        redis.call('SET', key, struct.pack(L.fmt, now, q), 'KEEPTTL')
      end
    end
  end
  local j = #out
  out[j + 1], out[j + 2], out[j + 3], out[j + 4] = ok, left, retry, reset
end
return struct.pack('>' .. string.rep('i8', #out), unpack(out))
