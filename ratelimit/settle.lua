-- settle.lua: Reservation.Commit and Cancel; run after policy.lua's function and reservations.lua (reserve.go).
-- Settles one reservation by its id, once: a commit of actual gives back
-- what it reserved beyond actual, or charges the excess as Take would (what
-- fits under every limit); a cancel gives it all back. A reservation
-- already settled is answered from its record and charged nothing again;
-- one past its expiry was released and is not found.
--
-- KEYS     each limit's state (wire.go), then the rule's reservations.
-- ARGV     actual (0 for a cancel), mode ('commit' or 'cancel'), a pinned
--          time or '', each limit packed (wire.go), then the id and the
--          expiry in µs.
-- Reply:   status (0 settled now, 1 committed before, 2 canceled before,
--          3 not found: expired), the units charged in all, then
--          policy.lua's reply for the rule after it ('>i8' each): of a
--          Take of the excess, or of a Peek.
local m = #KEYS - 1
local actual, mode, id, exp = tonumber(ARGV[1]), ARGV[2], ARGV[4 + m], ARGV[5 + m]
local rkey = KEYS[m + 1]
local ls = limitsOf(ARGV, m)
local now = clock(ARGV[3])
release(KEYS, ls, rkey, now)

local lkeys, largs = {}, { '1', 'peek', string.format('%d', now) }
for i = 1, m do
  lkeys[i], largs[3 + i] = KEYS[i], ARGV[3 + i]
end
local member = false
for _, v in ipairs(redis.call('ZRANGEBYSCORE', rkey, exp, exp)) do
  if string.sub(v, 1, idLen) == id then
    member = v
  end
end
local status, charged, rep = 3, 0, false
if member then
  local state = string.sub(member, idLen + 1, idLen + 1)
  if state == 'c' then
    status, charged = 1, struct.unpack('>I8', member, idLen + 2)
  elseif state == 'x' then
    status = 2
  else
    status = 0
    local at, amount, firsts = parseReservation(member, m)
    local keep = math.min(actual, amount)
    if mode == 'cancel' then
      keep = 0
    end
    for i, L in ipairs(ls) do
      giveBack(KEYS[i], L, at, firsts[i], amount, keep, now)
    end
    charged = keep
    if mode == 'commit' and actual > amount then
      largs[1], largs[2] = string.format('%d', actual - amount), 'take'
      rep = policy(lkeys, largs)
      charged = amount + struct.unpack('>i8', rep)
    end
    local tomb = id .. 'x'
    if mode == 'commit' then
      tomb = id .. 'c' .. struct.pack('>I8', charged)
    end
    -- The tomb first: removing the only member would delete the record,
    -- which a Cluster node migrating its slot would then refuse to write.
    redis.call('ZADD', rkey, exp, tomb)
    redis.call('ZREM', rkey, member)
    keepRecord(rkey, now, holdOf(ls))
  end
end
if not rep then
  rep = policy(lkeys, largs)
end
return struct.pack('>i8i8', status, charged) .. rep
