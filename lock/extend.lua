-- Compare-and-pexpire: give the lock a new TTL only if it is still this
-- acquisition's, marked by a waiter or not. An expired lock is not recreated.
-- KEYS[1] the lock   ARGV[1] "<id> <owner>" of the acquisition
-- ARGV[2] new ttl in ms
-- Returns 1 when extended, 0 when the lock was no longer ours.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or v == '*' .. ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
