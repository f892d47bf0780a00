-- GCRA's wait for need requests, the local d in µs, from the locals q,
-- cap, need, unit and drain: the backlog must fall to what leaves room for
-- need.
local excess = q - (cap - need) * unit
--#include lib/ceildiv.lua quo=d num=excess den=drain
