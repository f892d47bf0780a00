-- Delete a lock whoever holds it (an operator's action), and tell waiters.
-- KEYS[1] the lock
-- The release channel is KEYS[1] .. ':released' (see release.lua).
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('DEL', KEYS[1]) == 1 then
  redis.call('PUBLISH', KEYS[1] .. ':released', '')
  return 1
end
return 0
