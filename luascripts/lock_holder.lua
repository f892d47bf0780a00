#!lua flags=no-writes
-- Who holds a lock, read in one atomic step.
-- KEYS[1] lock hash
-- Returns {token, owner, pttl}; pttl is -2 when nobody holds the lock.
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 then
  return {0, '', -2}
end
local h = redis.call('HMGET', KEYS[1], 'token', 'owner')
return {tonumber(h[1]) or 0, h[2] or '', pttl}
