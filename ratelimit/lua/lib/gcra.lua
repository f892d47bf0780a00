-- GCRA's decision on one limit (gcra.lua documents its state and reply),
-- from the locals key, v (the state read, or false), n, mode, now, cap,
-- unit and drain. It returns the reply, packed, and when it admits, the
-- time it decided at (reserve.lua's; a script's call replies the first).
local t, q, fmt = -1, 0, false
if v then
  --#include lib/gcradecode.lua
  -- Time on a key never goes back: a clock stepped back cannot refill it.
  if t > now then
    now = t
  end
  q = math.max(q - (now - t) * drain, 0) -- drained to now
end
-- avail = floor((cap·unit - q) / unit), at least 0
local room = cap * unit - q
--#include lib/floordiv.lua quo=avail num=room den=unit
avail = math.max(avail, 0)

--#include lib/grant.lua
if granted > 0 then
  q = q + granted * unit
  avail = avail - granted
end
-- reset: when the backlog is empty
--#include lib/ceildiv.lua quo=reset num=q den=drain
if granted > 0 then
  --#include lib/gcrastore.lua
  return struct.pack('>i8i8i8i8i8i8', granted, 1, 1, avail, 0, reset), now
end

--#include lib/need.lua
if avail >= need then -- only a peek gets here with room
  return struct.pack('>i8i8i8i8i8i8', 0, 1, 1, avail, 0, reset)
end
--#include lib/gcrawait.lua

-- A rejection consumes nothing but keeps its time, the latest the key has
-- seen, or a clock stepped back afterwards would measure waits from an
-- earlier time. The backlog only drained: the stored width and TTL fit.
if mode ~= 'peek' and now > t and q > 0 then
  redis.call('SET', key, struct.pack(fmt, now, q), 'KEEPTTL')
end
return struct.pack('>i8i8i8i8i8i8', 0, 0, 0, avail, d, reset)
