#!lua flags=no-writes
-- Reads one field of a fenced hash (Store.HGet).
-- KEYS[1] the hash.   ARGV[1] the field.
-- Returns the value, or nil when the hash or the field does not exist.
return redis.call('HGET', KEYS[1], ARGV[1])
