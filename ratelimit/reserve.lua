-- reserve.lua: Limiter.Reserve; run after policy.lua's function and reservations.lua (reserve.go).
-- Charges amount against every limit of a rule, all or none, as AllowN
-- does, and records the reservation with its expiry, after releasing the
-- rule's reservations that expired.
--
-- KEYS     each limit's state (wire.go), then the rule's reservations.
-- ARGV     amount, the ttl in µs, a pinned time or '', each limit packed
--          (wire.go), then the reservation's id (16 bytes).
-- Reply:   policy.lua's reply for AllowN of amount, then the time it was
--          decided at and the expiry, in µs ('>i8' each; 0 when rejected).
local m = #KEYS - 1
local amount, ttl, id = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[4 + m]
local rkey = KEYS[m + 1]
local ls = limitsOf(ARGV, m)
local now = clock(ARGV[3])
release(KEYS, ls, rkey, now)

local lkeys, largs = {}, { ARGV[1], 'allow', string.format('%d', now) }
for i = 1, m do
  lkeys[i], largs[3 + i] = KEYS[i], ARGV[3 + i]
end
local rep = policy(lkeys, largs)
local granted = struct.unpack('>i8', rep)
if granted == 0 then
  return rep .. struct.pack('>i8i8', 0, 0)
end
local at = decidedAt(KEYS[1], ls[1])
local member = id .. 'r' .. struct.pack('>I8I8', at, amount)
for i, L in ipairs(ls) do
  local first = 0
  if L.alg == 'l' then
    -- The members just added are named from the live count before them (log.lua).
    local win = L.a
    local live = redis.call('ZCOUNT', KEYS[i], '(' .. string.format('%d', at - win), '+inf')
    local r = at - math.floor(at / win) * win
    if r < 0 then r = r + win elseif r >= win then r = r - win end
    first = r * L.cap + live - amount
  end
  member = member .. struct.pack('>I8', first)
end
local exp = at + ttl
redis.call('ZADD', rkey, string.format('%d', exp), member)
keepRecord(rkey, now, holdOf(ls))
return rep .. struct.pack('>i8i8', at, exp)
