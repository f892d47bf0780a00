-- Compare-and-pexpire: give the lock a new TTL only if it is still this
-- acquisition's. A lock that expired is not recreated.
-- KEYS[1] lock hash   ARGV[1] id of the acquisition   ARGV[2] new ttl in ms
-- Returns 1 when extended, 0 when the lock was no longer ours.
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
