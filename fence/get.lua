#!lua flags=no-writes
-- Reads a fenced string key (Store.Get).
-- KEYS[1] the key.
-- Returns the value, or nil when the key does not exist.
return redis.call('GET', KEYS[1])
