-- Acquire a lock and issue its fencing token, in one atomic step.
-- KEYS[1] lock hash {token, owner, id}   KEYS[2] fencing counter (no TTL, ever)
-- ARGV[1] ttl in ms   ARGV[2] id of this acquisition   ARGV[3] owner label
-- Returns {1, token} when acquired, {0, token, owner, pttl} when held.
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  local h = redis.call('HMGET', KEYS[1], 'token', 'owner', 'id')
  -- A client retry of an acquire that ran but whose reply was lost finds
  -- its own id: report success, not "held by someone".
  if h[3] == ARGV[2] then
    return {1, tonumber(h[1])}
  end
  return {0, tonumber(h[1]) or 0, h[2] or '', pttl}
end
local token = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'token', token, 'owner', ARGV[3], 'id', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {1, token}
