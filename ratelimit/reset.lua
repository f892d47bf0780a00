-- reset.lua: forgets a rule's state on one key (Limiter.Reset).
-- KEYS     the state of each limit of the rule (see keys.go); all in one hash tag.
-- ARGV     none.
-- Reply:   the number of keys deleted.
return redis.call('DEL', unpack(KEYS))
