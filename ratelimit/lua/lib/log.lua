-- The sliding log's decision on one limit (log.lua documents its members
-- and reply), from the locals key, newest (its newest member and score,
-- as ZRANGE -1 -1 WITHSCORES reads them), n, mode, now, cap and win. It
-- returns the reply, packed, and when it admits, the time it decided at
-- (as lib/gcra.lua) and the first new member's name.
local last, score, base, guard = newest[1], 0, false, -1
if last then
  score = tonumber(newest[2])
  --#include lib/logguard.lua
  -- Time on a key never goes back: a clock stepped back cannot reopen it.
  if guard > now then
    now = guard
  end
end
-- A rejection kept its time in the newest member's name (below): the log
-- was full then, and is likely full still. If the cap-th newest member is
-- live, so is every newer one: count is cap, without ZCOUNT, and that
-- member is the wait's for one request (11,000 server instructions less a
-- rejection; an admission pays the probe only after a rejection).
local count, oldest, floor = 0, false, false
if last and base ~= last then
  local rank = string.format('%d', -cap)
  local probe = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
  if probe[1] then
    oldest = tonumber(probe[2])
    if oldest > now - win then
      count = cap
    end
  end
end
if count < cap then
  floor = string.format('%d', now - win)
  if last then
    count = redis.call('ZCOUNT', key, '(' .. floor, '+inf')
  end
end
local avail = math.max(cap - count, 0)

--#include lib/grant.lua
if granted > 0 then
  --#include lib/logadd.lua
  return struct.pack('>i8i8i8i8i8i8', granted, 1, 1, avail - granted, 0, win), now, name
end

--#include lib/need.lua
local reset = 0
if count > 0 then
  reset = math.max(score + win - now, 0)
end
if avail >= need then -- only a peek gets here with room
  return struct.pack('>i8i8i8i8i8i8', 0, 1, 1, avail, 0, reset)
end
-- Wait until enough of the oldest live members age out: until the
-- (count - cap + need)-th oldest live one does. The live members are the
-- newest count, so that is the (cap - need + 1)-th newest, found by rank
-- without count or floor (ZRANGEBYSCORE with an offset cost 6,000 server
-- instructions more), or the probe's above for one request.
if need > 1 or not oldest then
  local at = string.format('%d', need - cap - 1)
  oldest = tonumber(redis.call('ZRANGE', key, at, at, 'WITHSCORES')[2])
end
local d = oldest + win - now

-- A rejection consumes nothing but keeps its time, the latest the key has
-- seen, in the newest member's name (its score unchanged): the set holds
-- exactly the admitted requests and nothing else. Add before removing:
-- removing the only member first would delete the key, and the ZADD would
-- make a new one without a TTL.
if mode ~= 'peek' and now > guard then
  redis.call('ZADD', key, newest[2], base .. '~' .. string.format('%d', now))
  redis.call('ZREM', key, last)
end
return struct.pack('>i8i8i8i8i8i8', 0, 0, 0, avail, d, reset)
