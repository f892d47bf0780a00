-- counter.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- Sliding-window counter, one limit: decides n requests and, unless the mode
-- is 'peek', consumes them when admitted.
--
-- KEYS[1]  the limit's state: a string packing t, the latest time decided at
--          (the monotonic guard, 7 bytes), then c, the count of t's bucket,
--          and p, the count of the bucket before (w bytes each, w as small
--          as the larger count allows). The bucket index is floor(t / window).
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then
--          the limit: 'c', capacity, window in µs and 0.
-- Reply:   every script's (wire.go), for a policy of one: granted, allowed,
--          then allowed, remaining, retry-after µs and reset-after µs.
--
-- The limit's numbers come packed and the reply goes packed: a table reply
-- and text numbers cost the server more (parsing and printing numbers, a
-- Lua table per call) than the struct calls that replace them.
--
-- Flat on purpose: no function or table is built per call.
local n, mode = tonumber(ARGV[1]), ARGV[2]
local cap, win = struct.unpack('>I8I8I8', ARGV[4], 2)
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

local v, err = read('GET', KEYS[1])
if err then
  return redis.error_reply(err)
end
local t, c, p, fmt = -1, 0, 0, false
if v then
  local f = 'I' .. (#v - 7) / 2
  fmt = '>I7' .. f .. f
  t, c, p = struct.unpack(fmt, v)
  -- Time on a key never goes back: a clock stepped back cannot reopen a bucket.
  if t > now then
    now = t
  end
end
local idx = math.floor(now / win)
local e = now - idx * win -- elapsed in now's bucket; the float quotient may round:
if e < 0 then
  idx, e = idx - 1, e + win
elseif e >= win then
  idx, e = idx + 1, e - win
end
local start = now - e -- of now's bucket
local cur, prev = 0, 0
if t >= start then
  cur, prev = c, p
elseif t >= start - win then
  prev = c
end
-- eps absorbs float noise in the weighted sum, never a whole request, and
-- stays under half of 1/window: a real shortfall is a multiple of that.
local eps = math.min(1e-9, 0.5 / win)
local avail = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)

local granted = 0
if mode == 'take' then
  granted = math.min(n, avail)
elseif mode == 'allow' and avail >= n then
  granted = n
end
if granted > 0 then
  cur = cur + granted
  local w, m = 1, math.max(cur, prev)
  while m >= 256 ^ w do
    w = w + 1
  end
  -- The key lives until the state is empty: cur leaves the window after the next bucket.
  local reset = 2 * win - e
  redis.call('SET', KEYS[1], struct.pack('>I7I' .. w .. 'I' .. w, now, cur, prev), 'PX', math.ceil(reset / 1000))
  avail = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)
  return struct.pack('>i8i8i8i8i8i8', granted, 1, 1, avail, 0, reset)
end

local need = n
if mode == 'take' then
  need = 1
end
local reset = 0
if cur > 0 then
  reset = 2 * win - e
elseif prev > 0 then
  reset = win - e
end
if avail >= need then -- only a peek gets here with room
  return struct.pack('>i8i8i8i8i8i8', 0, 1, 1, avail, 0, reset)
end

-- The wait: a closed-form guess, then corrected by a µs or two for float
-- rounding, so a client waiting exactly the returned time is admitted.
local target = cap - need -- the weighted count must fall to this
local d = 0
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

-- A rejection consumes nothing but keeps its time, the latest the key has
-- seen, or a clock stepped back afterwards would measure waits from an
-- earlier time. Rebased on now the counts only shrank: the stored width
-- and TTL still fit.
if mode ~= 'peek' and now > t and cur + prev > 0 then
  redis.call('SET', KEYS[1], struct.pack(fmt, now, cur, prev), 'KEEPTTL')
end
return struct.pack('>i8i8i8i8i8i8', 0, 0, 0, avail, d, reset)
