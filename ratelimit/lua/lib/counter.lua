-- The sliding counter's decision on one limit (counter.lua documents its
-- state and reply), from the locals key, v (the state read, or false), n,
-- mode, now, cap and win. It returns the reply, packed, and when it
-- admits, the time it decided at (as lib/gcra.lua).
local t, c, p, fmt = -1, 0, 0, false
if v then
  --#include lib/counterdecode.lua
  -- Time on a key never goes back: a clock stepped back cannot reopen a bucket.
  if t > now then
    now = t
  end
end
--#include lib/bucket.lua
local start = now - e -- of now's bucket
local cur, prev = 0, 0
--#include lib/countercounts.lua
-- eps absorbs float noise in the weighted sum, never a whole request, and
-- stays under half of 1/window: a real shortfall is a multiple of that.
local eps = math.min(1e-9, 0.5 / win)
local avail = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)

--#include lib/grant.lua
if granted > 0 then
  local reset
  --#include lib/counterstore.lua
  avail = math.max(math.floor(cap - prev * (win - e) / win - cur + eps), 0)
  return struct.pack('>i8i8i8i8i8i8', granted, 1, 1, avail, 0, reset), now
end

--#include lib/need.lua
local reset = 0
if cur > 0 then
  reset = 2 * win - e
elseif prev > 0 then
  reset = win - e
end
if avail >= need then -- only a peek gets here with room
  return struct.pack('>i8i8i8i8i8i8', 0, 1, 1, avail, 0, reset)
end

--#include lib/counterwait.lua

-- A rejection consumes nothing but keeps its time, the latest the key has
-- seen, or a clock stepped back afterwards would measure waits from an
-- earlier time. Rebased on now the counts only shrank: the stored width
-- and TTL still fit.
if mode ~= 'peek' and now > t and cur + prev > 0 then
  redis.call('SET', key, struct.pack(fmt, now, cur, prev), 'KEEPTTL')
end
return struct.pack('>i8i8i8i8i8i8', 0, 0, 0, avail, d, reset)
