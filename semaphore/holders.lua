#!lua flags=no-writes
-- The live permits of a semaphore, read in one atomic step.
-- KEYS[1] the permits   KEYS[2] the holders
-- Returns {now µs, id, expiry µs, "<token> <granted µs> <owner>", id, …},
-- earliest expiry first.
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local live = redis.call('ZRANGE', KEYS[1], '(' .. string.format('%d', now), '+inf', 'BYSCORE', 'WITHSCORES')
local out = {now}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HMGET', KEYS[2], live[i])[1] or ''
end
return out
