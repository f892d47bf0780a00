-- The counter's write of an admission of granted requests: now and the
-- counts in as few bytes as the larger needs, with the TTL reset. From the
-- locals key, now, cur, prev, granted, win and e; sets cur and reset.
cur = cur + granted
local most = math.max(cur, prev)
--#include lib/width.lua
-- The key lives until the state is empty: cur leaves the window after the next bucket.
reset = 2 * win - e
local f = 'I' .. string.sub('12345678', w, w) -- (as lib/counterdecode.lua's)
redis.call('SET', key, struct.pack('>I7' .. f .. f, now, cur, prev), 'PX', string.format('%d', math.ceil(reset / 1000)))
