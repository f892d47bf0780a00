-- Give a permit back, if it is still live, and tell waiters at once if one
-- marked the semaphore.
-- KEYS[1] the permits   KEYS[2] the holders   KEYS[3] the waiter mark
-- ARGV[1] the permit id
-- The release channel is KEYS[1] .. ':released': a channel, not a key, so
-- building it here moves nothing out of the call's slot.
-- Returns {1, now µs} when released, {0, now µs} when the permit had expired
-- or was gone already.
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry then
  return {0, now}
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if tonumber(expiry) <= now then
  return {0, now} -- it had expired: its place was free already
end
if redis.call('DEL', KEYS[3]) == 1 then
  redis.call('PUBLISH', KEYS[1] .. ':released', '')
end
return {1, now}
