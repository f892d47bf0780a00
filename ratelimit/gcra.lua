-- gcra.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- GCRA, one limit, kept as the equivalent leaky bucket in exact integers:
-- one request adds unit to the backlog q, which drains drain per µs
-- (unit / drain = period / rate, the emission interval, reduced in Go by
-- their greatest common divisor). Capacity is the burst; Go checks
-- capacity × unit < 2^53, so every value is an exact integer and every
-- wait exact. Decides n requests and, unless the mode is 'peek', consumes
-- them when admitted.
--
-- KEYS[1]  the limit's state: a string packing t (the latest time decided
--          at, the monotonic guard and the stamp of q, 7 bytes) and q
--          (w bytes, as few as q needs).
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then
--          the limit: 'g', capacity (the burst), unit and drain.
-- Reply:   every script's (wire.go), for a policy of one: granted, allowed,
--          then allowed, remaining, retry-after µs and reset-after µs.
--
-- The limit's numbers come packed and the reply goes packed: a table reply
-- and text numbers cost the server more (parsing and printing numbers, a
-- Lua table per call) than the struct calls that replace them.
--
-- Flat on purpose: no function or table is built per call. Divisions go
-- through floats and are corrected where the quotient rounds across an
-- integer (values stay below 2^53).
local n, mode = tonumber(ARGV[1]), ARGV[2]
local cap, unit, drain = struct.unpack('>I8I8I8', ARGV[4], 2)
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
local t, q, fmt = -1, 0, false
if v then
  fmt = '>I7I' .. (#v - 7)
  t, q = struct.unpack(fmt, v)
  -- Time on a key never goes back: a clock stepped back cannot refill it.
  if t > now then
    now = t
  end
  q = math.max(q - (now - t) * drain, 0)
end
-- avail = floor((cap·unit - q) / unit), at least 0
local room = cap * unit - q
local avail = math.floor(room / unit)
if avail * unit > room then
  avail = avail - 1
elseif (avail + 1) * unit <= room then
  avail = avail + 1
end
avail = math.max(avail, 0)

local granted = 0
if mode == 'take' then
  granted = math.min(n, avail)
elseif mode == 'allow' and avail >= n then
  granted = n
end
if granted > 0 then
  q = q + granted * unit
  avail = avail - granted
end
-- reset = ceil(q / drain): when the backlog is empty
local reset = math.floor(q / drain)
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
  redis.call('SET', KEYS[1], struct.pack('>I7I' .. w, now, q), 'PX', math.ceil(reset / 1000))
  return struct.pack('>i8i8i8i8i8i8', granted, 1, 1, avail, 0, reset)
end

local need = n
if mode == 'take' then
  need = 1
end
if avail >= need then -- only a peek gets here with room
  return struct.pack('>i8i8i8i8i8i8', 0, 1, 1, avail, 0, reset)
end
-- The backlog must fall to what leaves room for need: ceil(excess / drain).
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

-- A rejection consumes nothing but keeps its time, the latest the key has
-- seen, or a clock stepped back afterwards would measure waits from an
-- earlier time. The backlog only drained: the stored width and TTL fit.
if mode ~= 'peek' and now > t and q > 0 then
  redis.call('SET', KEYS[1], struct.pack(fmt, now, q), 'KEEPTTL')
end
return struct.pack('>i8i8i8i8i8i8', 0, 0, 0, avail, d, reset)
