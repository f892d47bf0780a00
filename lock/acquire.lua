-- Acquire a lock and issue its fencing token, in one atomic step.
-- KEYS[1] the lock: a string "<id> <owner>" with a PX expiry
-- KEYS[2] its fencing counter (no TTL, ever)
-- ARGV[1] ttl in ms   ARGV[2] "<id> <owner>" of this acquisition
-- ARGV[3] the token's clock: "" for counter-only tokens (counter + 1); "t" for
--         max(counter + 1, the server's TIME in µs); or a time in µs that
--         stands in for TIME (tests that simulate a skewed server clock)
-- ARGV[4] (optional) present when the caller waits on the release channel:
--         the lock is then marked ("*" in front) so its release publishes.
-- Returns the token when acquired, {token, value, pttl} when held.
local v = redis.pcall('GET', KEYS[1])
if not v then
  -- Free. The counter is written first and the lock last, so a counter
  -- that cannot be written (an ACL refusal, a non-integer) stops the script
  -- with nothing written: no lock is left without a lease.
  local token
  if ARGV[3] == '' then
    token = redis.call('INCR', KEYS[2])
  else
    local now = tonumber(ARGV[3])
    if not now then
      local t = redis.call('TIME')
      now = t[1] * 1000000 + t[2]
    end
    local c = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
    token = redis.call('INCRBY', KEYS[2], math.max(1, now - c))
  end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
  return token
end
-- Held. The counter is the holder's token: only this script writes either
-- key, and it writes the counter whenever it sets the lock.
local token = tonumber(redis.call('GET', KEYS[2])) or 0
if type(v) ~= 'string' then -- not a string, so not a lock this script set
  return {token, '', redis.call('PTTL', KEYS[1])}
end
-- A client retry of an acquire that ran but whose reply was lost finds
-- its own value: report success, not "held by someone".
if v == ARGV[2] or v == '*' .. ARGV[2] then
  return token
end
if ARGV[4] and string.byte(v) ~= 42 then
  redis.call('SET', KEYS[1], '*' .. v, 'XX', 'KEEPTTL')
end
return {token, v, redis.call('PTTL', KEYS[1])}
