-- Compare-and-delete: delete the lock only if it is still this acquisition's,
-- and tell waiters at once if one marked it (see acquire.lua).
-- KEYS[1] the lock   ARGV[1] "<id> <owner>" of the acquisition
-- The release channel is KEYS[1] .. ':released': a channel, not a key, so
-- building it here moves nothing out of the call's slot.
-- Returns 1 when deleted, 0 when the lock was no longer ours.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
if v == '*' .. ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[1] .. ':released', '')
  return 1
end
return 0
