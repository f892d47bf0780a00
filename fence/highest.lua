#!lua flags=no-writes
-- Reads a high-water mark (Store.Highest).
-- KEYS[1] the mark.
-- Returns the highest token accepted, 0 when none has been.
return tonumber(redis.call('GET', KEYS[1]) or '0')
