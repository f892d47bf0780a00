-- Compare-and-delete: delete the lock only if it is still this acquisition's,
-- and tell waiters at once.
-- KEYS[1] lock hash   ARGV[1] id of the acquisition   ARGV[2] release channel
-- ARGV[3] the lease's token, published as the message
-- Returns 1 when deleted, 0 when the lock was no longer ours.
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0
