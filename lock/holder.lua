#!lua flags=no-writes
-- Who holds a lock, read in one atomic step.
-- KEYS[1] the lock   KEYS[2] its fencing counter
-- Returns {token, value, pttl}; pttl is -2 when nobody holds the lock.
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 then
  return {0, '', -2}
end
local m = redis.call('MGET', KEYS[1], KEYS[2])
return {tonumber(m[2]) or 0, m[1] or '', pttl}
