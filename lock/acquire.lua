-- Acquire a lock and issue its fencing token, in one atomic step.
-- KEYS[1] the lock: a string "<id> <owner>" with a PX expiry
-- KEYS[2] its fencing counter: the last token issued (no TTL, ever)
-- ARGV[1] ttl in ms   ARGV[2] "<id> <owner>" of this acquisition
-- ARGV[3] the token's clock: "" for counter-only tokens (counter + 1); "t" for
--         max(counter + 1, the server's TIME in µs); or a time in µs that
--         stands in for TIME (tests that simulate a skewed server clock)
-- ARGV[4] (optional) present when the caller waits on the release channel:
--         the lock is then marked ("*" in front) so its release publishes.
-- Returns the token when acquired, {token, value, pttl} when held.
--
-- One SET NX GET takes a free lock and reads a held one's value: a free
-- lock costs three commands (this, TIME and the counter's SET GET).
local v = redis.pcall('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1], 'GET')
if not v then
  -- Was free, is now ours. A counter that cannot be written (an ACL
  -- refusal, another type, not an integer) undoes the lock: no lock is
  -- left without its token.
  local token
  if ARGV[3] == '' then
    token = redis.pcall('INCR', KEYS[2])
    if type(token) == 'table' then
      redis.call('DEL', KEYS[1])
    end
    return token
  end
  local now = tonumber(ARGV[3])
  if not now then
    local t = redis.pcall('TIME')
    if t.err then
      redis.call('DEL', KEYS[1])
      return t
    end
    now = t[1] * 1000000 + t[2]
  end
  -- Nearly always the clock is ahead of the counter and this one SET GET
  -- both reads the counter and issues the token.
  local last = redis.pcall('SET', KEYS[2], string.format('%d', now), 'GET')
  if type(last) == 'table' then
    redis.call('DEL', KEYS[1])
    return last
  end
  token = now
  if last then
    if not string.match(last, '^%-?%d+$') then
      redis.call('SET', KEYS[2], last)
      redis.call('DEL', KEYS[1])
      return redis.error_reply('ERR fencing counter ' .. KEYS[2] .. ' is not an integer')
    end
    local c = tonumber(last)
    if c >= now then -- the clock is behind the counter: counter + 1
      token = c + 1
      redis.call('SET', KEYS[2], string.format('%d', token))
    end
  end
  return token
end
if type(v) == 'table' then
  if string.sub(v.err, 1, 9) ~= 'WRONGTYPE' then
    return v -- refused (ACL), or an error of the server's
  end
  -- Not a string, so not a lock this script set.
  return {tonumber(redis.call('GET', KEYS[2])) or 0, '', redis.call('PTTL', KEYS[1])}
end
-- Held. The counter is the holder's token: only this script writes either
-- key, and it writes the counter whenever it sets the lock.
local token = tonumber(redis.call('GET', KEYS[2])) or 0
-- A client retry of an acquire that ran but whose reply was lost finds
-- its own value: report success, not "held by someone".
if v == ARGV[2] or v == '*' .. ARGV[2] then
  return token
end
if ARGV[4] and string.byte(v) ~= 42 then
  redis.call('SET', KEYS[1], '*' .. v, 'XX', 'KEEPTTL')
end
return {token, v, redis.call('PTTL', KEYS[1])}
