-- Take one permit of a semaphore and issue its fencing token, in one atomic step.
-- KEYS[1] the permits: a sorted set of permit ids, each scored by its expiry
--         (the server's TIME in µs)
-- KEYS[2] the holders: a hash, permit id -> "<token> <granted µs> <owner>"
-- KEYS[3] the fencing counter: the last token issued (no TTL, ever)
-- KEYS[4] the waiter mark: while it exists, a release publishes
-- ARGV[1] capacity   ARGV[2] ttl in ms   ARGV[3] permit id   ARGV[4] owner
-- ARGV[5] (optional) present when the caller waits on the release channel
-- Returns {token, granted µs} when granted, and
-- {0, now µs, live permits, µs until the earliest of them expires} when full.
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local nows = string.format('%d', now)
-- Nothing sweeps: each acquire drops a few expired permits, and counts only
-- live ones, so a crashed holder's permit is free from its expiry on.
local expired = redis.call('ZRANGE', KEYS[1], '-inf', nows, 'BYSCORE', 'LIMIT', 0, 16)
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
-- go-redis resends a script whose reply it lost: the id is this call's,
-- so finding it live means the first send granted it. No second permit.
local mine = redis.call('ZSCORE', KEYS[1], ARGV[3])
if mine and tonumber(mine) > now then
  local v = redis.call('HMGET', KEYS[2], ARGV[3])[1]
  local token, granted = string.match(v or '', '^(%d+) (%d+) ')
  return {tonumber(token) or 0, tonumber(granted) or now}
end
local live = redis.call('ZCOUNT', KEYS[1], '(' .. nows, '+inf')
if live >= tonumber(ARGV[1]) then
  local first = redis.call('ZRANGE', KEYS[1], '(' .. nows, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if ARGV[5] then
    -- The mark lives as long as the longest permit: a release after that
    -- wakes nobody, and the waiters' fallback re-check takes over.
    redis.call('SET', KEYS[4], '1', 'PX', math.floor((tonumber(last[2]) - now) / 1000) + 1)
  end
  return {0, now, live, tonumber(first[2]) - now}
end
-- A hybrid token: the server's clock, or the counter + 1 when the counter
-- is ahead, so a lost counter does not hand out a token again.
local token = now
local c = redis.call('GET', KEYS[3])
if c then
  c = tonumber(c)
  if not c then
    return redis.error_reply('ERR fencing counter ' .. KEYS[3] .. ' is not an integer')
  end
  if c >= now then token = c + 1 end
end
redis.call('SET', KEYS[3], string.format('%d', token))
redis.call('ZADD', KEYS[1], string.format('%d', now + tonumber(ARGV[2]) * 1000), ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], string.format('%d %s %s', token, nows, ARGV[4]))
-- Both keys live exactly as long as their longest permit.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local ms = math.floor((tonumber(last[2]) - now) / 1000) + 1
redis.call('PEXPIRE', KEYS[1], ms)
redis.call('PEXPIRE', KEYS[2], ms)
return {token, now}
