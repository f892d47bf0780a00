-- A fenced HSET of one field: refuse a token lower than the highest
-- accepted, else record it and write, in one atomic step.
-- KEYS[1] high-water mark (no TTL)   KEYS[2] the hash
-- ARGV[1] token   ARGV[2] field   ARGV[3] value
-- Returns {1, token} when written, {0, highest} when refused.
local token = tonumber(ARGV[1])
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
if token < highest then
  return {0, highest}
end
if token > highest then
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return {1, token}
