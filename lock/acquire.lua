-- Acquire a lock and issue its fencing token, in one atomic step.
-- KEYS[1] the lock: a string "<id> <owner>" with a PX expiry
-- KEYS[2] its fencing counter (no TTL, ever)
-- ARGV[1] ttl in ms   ARGV[2] "<id> <owner>" of this acquisition
-- ARGV[3] (optional) present when the caller waits on the release channel:
--         the lock is then marked ("*" in front) so its release publishes.
-- Returns the token when acquired, {token, value, pttl} when held.
if redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
  return redis.call('INCR', KEYS[2])
end
-- Held. The counter is the holder's token: only this script writes either
-- key, and it INCRs the counter whenever it sets the lock.
local m = redis.call('MGET', KEYS[1], KEYS[2])
local v, token = m[1], tonumber(m[2]) or 0
if not v then -- not a string, so not a lock this script set
  return {token, '', redis.call('PTTL', KEYS[1])}
end
-- A client retry of an acquire that ran but whose reply was lost finds
-- its own value: report success, not "held by someone".
if v == ARGV[2] or v == '*' .. ARGV[2] then
  return token
end
if ARGV[3] and string.byte(v) ~= 42 then
  redis.call('SET', KEYS[1], '*' .. v, 'XX', 'KEEPTTL')
end
return {token, v, redis.call('PTTL', KEYS[1])}
