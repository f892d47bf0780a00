-- GCRA's write of an admission: now and the backlog q, in as few bytes as
-- q needs, until the backlog is empty (reset µs). From the locals key, now,
-- q and reset.
--#include lib/width.lua most=q
redis.call('SET', key, struct.pack('>I7I' .. string.sub('12345678', w, w), now, q), 'PX', string.format('%d', math.ceil(reset / 1000)))
