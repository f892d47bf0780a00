#!lua flags=allow-cross-slot-keys
-- batch.lua: many decisions in one call, each made as policy.lua makes it
-- (its arithmetic is repeated here formula for formula, with the same
-- names, and TestBatchScriptDecidesAsThePerDecisionScripts holds the two
-- to the same answers, reply by reply).
--
-- KEYS[1]  any key of the batch: it only routes the call to its node on a
--          Cluster. Every key is passed again in ARGV, where the Cluster
--          does not check that they share a slot (allow-cross-slot-keys:
--          the node must own them, and refuses a key it does not).
-- ARGV     the decisions, in the order they are made: for each, m (its
--          number of limits), its m keys, then its call's own ARGV
--          (wire.go: n, mode 'allow' or 'take', a pinned time or '', then
--          m packed limits).
-- Reply:   the number of decisions made (8 bytes, big-endian), then the
--          reply of each (wire.go's, 8·(2+4m) bytes), then, if not all
--          were made, the error that stopped the one after them.
--
-- Why this order, reads of every key first, then the decisions one by one:
-- a Cluster node refuses a command on a key it does not own, or a missing
-- key of a slot it is migrating, at that command, and Redis does not undo
-- what the script wrote before. So every key is read (and decoded, which
-- may fail on a foreign value) before anything is written: such an error
-- ends the call before any write, and Go sends the decisions again one by
-- one. After those reads no command can meet that refusal, as long as no
-- key goes missing: the slot's owner cannot change during a script, a key
-- cannot expire in it (the time is frozen), and no write below deletes a
-- key (the log adds its new members before it trims the old ones).
-- An error after the first write (a command refused on its own: an ACL that
-- lets a key be read but not written) stops at the decision it hit: the
-- ones before it are made and replied, and that one's error is reported as
-- its own, as policy.lua would have reported it, part-way through its
-- writes too; the ones after it are not made, and Go sends them alone.
--
-- One TIME for the whole call, read on the first decision that has no
-- pinned time: the decisions of a batch are made at one instant. Each
-- decision's own monotonic guard still applies.

-- The state of each key, read once and then kept in step with what the
-- decisions write: st[key] is its decoded state, or false when it must be
-- read again (a log after a write; a sorted set is not rebuilt here).
local st = {}
local function read(alg, key)
  local S = { guard = -1, last = false, score = 0, base = false, c = 0, p = 0, q = 0, fmt = false }
  if alg == 'l' then
    local newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
    if newest[1] then
      S.last, S.score = newest[1], tonumber(newest[2])
      S.guard, S.base = S.score, S.last
      local at = string.find(S.last, '~', 1, true)
      if at then
        S.guard, S.base = math.max(S.score, tonumber(string.sub(S.last, at + 1))), string.sub(S.last, 1, at - 1)
      end
    end
  else
    local v = redis.call('GET', key)
    if v and alg == 'c' then
      local f = 'I' .. (#v - 7) / 2
      S.fmt = '>I7' .. f .. f
      S.guard, S.c, S.p = struct.unpack(S.fmt, v)
    elseif v then
      S.fmt = '>I7I' .. (#v - 7)
      S.guard, S.q = struct.unpack(S.fmt, v)
    end
  end
  st[key] = S
  return S
end

-- Read: every key of every decision, before any write.
local total = 0
do
  local j = 1
  while j <= #ARGV do
    local m = tonumber(ARGV[j])
    for i = 1, m do
      local key = ARGV[j + i]
      if st[key] == nil then
        read(string.sub(ARGV[j + m + 3 + i], 1, 1), key)
      end
    end
    j, total = j + 2 * m + 4, total + 1
  end
end

local clock = false
local replies = {}

-- decide makes the decision whose m sits at ARGV[j], and returns its reply.
local function decide(j)
  local m = tonumber(ARGV[j])
  local a0 = j + m -- ARGV[a0 + 1]: n; + 2: mode; + 3: pinned; + 3 + i: limit i
  local n, mode = tonumber(ARGV[a0 + 1]), ARGV[a0 + 2]
  local now
  if ARGV[a0 + 3] ~= '' then
    now = tonumber(ARGV[a0 + 3])
  else
    if not clock then
      local t = redis.call('TIME')
      clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
    end
    now = clock
  end

  -- policy.lua's read, from the states kept.
  local ls = {}
  for i = 1, m do
    local key = ARGV[j + i]
    local alg, cap, a, b = struct.unpack('>c1I8I8I8', ARGV[a0 + 3 + i])
    local S = st[key] or read(alg, key)
    local L = { key = key, S = S, alg = alg, cap = cap, a = a, b = b, guard = S.guard, avail = 0, last = S.last,
      score = S.score, base = S.base, count = 0, c = S.c, p = S.p, fmt = S.fmt, cur = 0, prev = 0, start = 0, q = S.q }
    if L.guard > now then
      now = L.guard
    end
    ls[i] = L
  end

  -- Weigh: policy.lua's.
  local avail = math.huge
  for _, L in ipairs(ls) do
    if L.alg == 'l' then
      local win = L.a
      if L.last then
        L.count = redis.call('ZCOUNT', L.key, '(' .. string.format('%d', now - win), '+inf')
      end
      L.avail = math.max(L.cap - L.count, 0)
    elseif L.alg == 'c' then
      local win = L.a
      local e = now - math.floor(now / win) * win
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
      L.q = math.max(L.q - (now - L.guard) * drain, 0)
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
  if granted > 0 then
    allowed = 1
  end
  local touch = granted == 0

  -- Write: policy.lua's, keeping each key's state in st in step.
  local out = { granted, allowed }
  for _, L in ipairs(ls) do
    local key, cap, S = L.key, L.cap, L.S
    local ok, left, retry, reset = 1, L.avail, 0, 0
    if L.alg == 'l' then
      local win, count = L.a, L.count
      local floor = string.format('%d', now - win)
      if granted > 0 then
        -- policy.lua's writes, reordered so that the set is never empty
        -- between two of them (an emptied set is a deleted key; see the
        -- top): the renamed member's name back and the new members first,
        -- the trim last. Each write names other members than the ones
        -- before it, or gives the same member the score policy.lua's last
        -- write gives it, so the set ends the same.
        if L.base ~= L.last and L.score > now - win then
          redis.call('ZADD', key, string.format('%d', L.score), L.base)
          redis.call('ZREM', key, L.last)
        end
        local at = string.format('%d', now)
        local r = now - math.floor(now / win) * win
        if r < 0 then r = r + win elseif r >= win then r = r - win end
        local name = r * cap + count
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
        st[key] = false
      else
        if count > 0 then
          reset = math.max(L.score + win - now, 0)
        end
        if L.avail < need then
          ok = 0
          local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. floor, '+inf', 'WITHSCORES', 'LIMIT', string.format('%d', count - cap + need - 1), '1')
          retry = tonumber(oldest[2]) + win - now
        end
        if touch and now > L.guard and count > 0 then
          redis.call('ZADD', key, string.format('%d', L.score), L.base .. '~' .. string.format('%d', now))
          redis.call('ZREM', key, L.last)
          st[key] = false
        end
      end
    elseif L.alg == 'c' then
      local win, start, cur, prev = L.a, L.start, L.cur, L.prev
      local e, eps = now - start, math.min(1e-9, 0.5 / win)
      if granted > 0 then
        cur = cur + granted
        local w, mx = 1, math.max(cur, prev)
        while mx >= 256 ^ w do
          w = w + 1
        end
        reset = 2 * win - e
        S.fmt = '>I7I' .. w .. 'I' .. w
        redis.call('SET', key, struct.pack(S.fmt, now, cur, prev), 'PX', math.ceil(reset / 1000))
        S.guard, S.c, S.p = now, cur, prev
        left = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)
      else
        if cur > 0 then
          reset = 2 * win - e
        elseif prev > 0 then
          reset = win - e
        end
        if L.avail < need then
          ok = 0
          local target, d = cap - need, 0
          if cur > target then
            d = (win - e) + win - target * win / cur
          elseif prev > 0 then
            d = win - (target - cur) * win / prev - e
          end
          d = math.max(math.ceil(d), 0)
          for _ = 1, 64 do
            local at = now + d
            local ce, pe, el = 0, 0, 0
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
          redis.call('SET', key, struct.pack(L.fmt, now, cur, prev), 'KEEPTTL')
          S.guard, S.c, S.p = now, cur, prev
        end
      end
    else
      local unit, drain, q = L.a, L.b, L.q
      if granted > 0 then
        q = q + granted * unit
        left = L.avail - granted
      end
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
        S.fmt = '>I7I' .. w
        redis.call('SET', key, struct.pack(S.fmt, now, q), 'PX', math.ceil(reset / 1000))
        S.guard, S.q = now, q
      else
        if L.avail < need then
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
          redis.call('SET', key, struct.pack(L.fmt, now, q), 'KEEPTTL')
          S.guard, S.q = now, q
        end
      end
    end
    local k = #out
    out[k + 1], out[k + 2], out[k + 3], out[k + 4] = ok, left, retry, reset
  end
  return struct.pack('>' .. string.rep('i8', #out), unpack(out))
end

-- Decide, in order; an error stops at the decision it hit (see the top).
local made, j = 0, 1
local ok, err = pcall(function()
  while made < total do
    replies[made + 1] = decide(j)
    made = made + 1
    j = j + 2 * tonumber(ARGV[j]) + 4
  end
end)
local head = struct.pack('>i8', made)
if ok then
  return head .. table.concat(replies)
end
if type(err) == 'table' then
  err = err.err
end
return head .. table.concat(replies) .. tostring(err)
