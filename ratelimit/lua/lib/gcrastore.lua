-- GCRA's write of an admission: now and the backlog q, in as few bytes as
-- q needs, until the backlog is empty (reset µs). From the locals key, now,
-- q and reset.
local w = 1
while q >= 256 ^ w do
  w = w + 1
end
redis.call('SET', key, struct.pack('>I7I' .. string.sub('12345678', w, w), now, q), 'PX', string.format('%d', math.ceil(reset / 1000)))
