#!lua flags=no-writes
-- Reads one field of a fenced hash. KEYS[1] the hash, ARGV[1] the field.
-- Returns the value or nil.
return redis.call('HGET', KEYS[1], ARGV[1])
