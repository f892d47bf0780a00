-- reserve.lua: Limiter.Reserve.
-- Charges amount against every limit of a rule, all or none, as AllowN
-- does, and records the reservation with its expiry, after releasing the
-- rule's reservations that expired.
--
-- KEYS     each limit's state (wire.go), then the rule's reservations.
-- ARGV     amount, the ttl in µs, a pinned time or '', each limit packed
--          (wire.go), then the reservation's id (16 bytes).
-- Reply:   the rule's reply for AllowN of amount (wire.go), then the time it was
--          decided at and the expiry, in µs ('>i8' each; 0 when rejected).
--#include lib/policycall.lua

--#include lib/reservations.lua

--#include lib/release.lua

local amount, ttl, id = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[4 + m]

local rep, at, named = decide(KEYS, ARGV, ls, amount, 'allow', now)
local granted = struct.unpack('>i8', rep)
if granted == 0 then
  return rep .. struct.pack('>i8i8', 0, 0)
end
-- The log's first new member's name, which the decision returns (a
-- ZCOUNT to recount it cost a log Reserve 9,000 server instructions).
local member = id .. 'r' .. struct.pack('>I8I8', at, amount)
for i = 1, m do
  local first = 0
  if ls[i].alg == 'l' then
    first = named
    if m > 1 then
      first = named[i].first
    end
  end
  member = member .. struct.pack('>I8', first)
end
local exp = at + ttl
redis.call('ZADD', rkey, string.format('%d', exp), member)
local made = true
--#include lib/keeprecord.lua
return rep .. struct.pack('>i8i8', at, exp)
