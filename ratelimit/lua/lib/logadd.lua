-- The sliding log's admission of granted requests at now: new members
-- named from count, the live members before them, then the trim and the
-- TTL. From the locals key, last, base and score (the newest member, as
-- read), now, win, cap, count, granted and floor (now - win, as text).
-- Every write that adds comes before any that removes, so the set is
-- never empty in between: an emptied set is a deleted key, and on a
-- Cluster, in a slot being migrated, a key the node does not have is
-- another node's: the write after it would fail, with the removal kept.
-- Each write names other members than those before it, so the set ends
-- as in any order.
if base ~= last and score > now - win then
  -- The guard moves to the new members: give the renamed one its name back.
  redis.call('ZADD', key, string.format('%d', score), base)
  redis.call('ZREM', key, last)
end
local at = string.format('%d', now)
--#include lib/bucket.lua e=r
local name = r * cap + count -- the name of c = count + 1 (log.lua)
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
