-- Give a live permit a new TTL, counted from now. An expired permit is
-- never brought back, even before an acquire has dropped it.
-- KEYS[1] the permits   KEYS[2] the holders   KEYS[3] the waiter mark
-- ARGV[1] the permit id   ARGV[2] the new ttl in ms
-- Returns {1, now µs} when extended, {0, now µs} when the permit was not live.
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry or tonumber(expiry) <= now then
  return {0, now}
end
redis.call('ZADD', KEYS[1], 'XX', string.format('%d', now + tonumber(ARGV[2]) * 1000), ARGV[1])
-- The keys, and a waiter's mark, live as long as the longest permit.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local ms = math.floor((tonumber(last[2]) - now) / 1000) + 1
for i = 1, 3 do
  redis.call('PEXPIRE', KEYS[i], ms)
end
return {1, now}
