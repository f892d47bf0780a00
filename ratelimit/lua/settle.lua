-- settle.lua: Reservation.Commit and Cancel.
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
--          the rule's reply after it (wire.go; '>i8' each): of a
--          Take of the excess, or of a Peek.
--#include lib/policycall.lua

--#include lib/reservations.lua

--#include lib/release.lua

local actual, mode, id, exp = tonumber(ARGV[1]), ARGV[2], ARGV[4 + m], ARGV[5 + m]

local member, found = false, redis.call('ZRANGEBYSCORE', rkey, exp, exp)
for i = 1, #found do
  if string.sub(found[i], 1, idLen) == id then
    member = found[i]
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
    local keep = actual
    if mode == 'cancel' then
      keep = 0
    end
    local amount = giveBack(member, keep)
    charged = math.min(keep, amount)
    if mode == 'commit' and actual > amount then
      rep = decide(KEYS, ARGV, ls, actual - amount, 'take', now)
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
  end
end
if not rep then
  rep = decide(KEYS, ARGV, ls, 1, 'peek', now)
end
return struct.pack('>i8i8', status, charged) .. rep
