-- What the reservation scripts share (reserve.lua, settle.lua, extend.lua):
-- their frame, in line (a function is a closure built on every call, about
-- 1,200 server instructions).
--
-- A rule's reservations live in one sorted set (KEYS[#limits + 1]) scored
-- by each one's expiry in µs on the server's clock. A member is the
-- reservation's id (16 bytes) then its state:
--   'r' at amount name_1 … name_m   outstanding: the time it was charged at,
--                                   the amount, and per limit the name of
--                                   the first log member it added (0 for
--                                   the counter and GCRA); '>I8' each
--   'c' charged                     committed, charging that much
--   'x'                             canceled
-- A settled reservation's member stays until its expiry, so that a retried
-- settle finds it and charges nothing again; then it goes. Its expiry
-- orders the set, so every call of the rule releases the outstanding
-- reservations past their expiry first, by the server's time: no sweeper.

local idLen = 16

-- m, the rule's limits ls (ARGV[3 + i], unpacked), its record rkey and now.
local m = #KEYS - 1
local rkey = KEYS[m + 1]
local ls = {}
for i = 1, m do
  local alg, cap, a, b = struct.unpack('>c1I8I8I8', ARGV[3 + i])
  ls[i] = { alg = alg, cap = cap, a = a, b = b }
end
--#include lib/clock.lua
