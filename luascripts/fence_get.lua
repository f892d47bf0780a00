#!lua flags=no-writes
-- Reads a fenced string key. KEYS[1] the key. Returns the value or nil.
return redis.call('GET', KEYS[1])
