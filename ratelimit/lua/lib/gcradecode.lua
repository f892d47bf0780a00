-- GCRA's state in the local v, into the locals fmt, its format (the time
-- in 7 bytes, then the backlog in the width v has; its digit by string.sub,
-- as lib/counterdecode.lua's), t, the time it was written at, and q, the
-- backlog then.
fmt = '>I7I' .. string.sub('12345678', #v - 7, #v - 7)
t, q = struct.unpack(fmt, v)
