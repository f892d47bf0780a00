-- extend.lua: Reservation.Extend and a Keeper's extensions.
-- Moves an outstanding reservation's expiry from one time to a later one,
-- once: found at the later time, it was moved by an earlier run of the
-- same call (its reply lost), and stays. A reservation past its expiry is
-- not found: it is never revived, and the next Reserve, Commit or Cancel
-- of the rule releases it (an extension releases nothing: it would spend a
-- read on every extension of a long job for what those calls do anyway).
--
-- KEYS     each limit's state (wire.go), then the rule's reservations.
-- ARGV     '', '', a pinned time or '', each limit packed (wire.go), then
--          the id, the expiry in µs and the expiry to move it to.
-- Reply:   status ('>i8'): 0 outstanding, now at the later expiry;
--          1 committed; 2 canceled; 3 not found (expired).
--#include lib/reservations.lua

local id, from, to = ARGV[4 + m], ARGV[5 + m], ARGV[6 + m]

local function find(exp)
  if tonumber(exp) <= now then
    return false -- past its expiry, released or about to be
  end
  for _, v in ipairs(redis.call('ZRANGEBYSCORE', rkey, exp, exp)) do
    if string.sub(v, 1, idLen) == id then
      return v
    end
  end
  return false
end
-- At from, unless an earlier run of this call (its reply lost) moved it.
local member = find(from) or find(to)
if not member then
  return struct.pack('>i8', 3)
end
local state = string.sub(member, idLen + 1, idLen + 1)
if state == 'c' then
  return struct.pack('>i8', 1)
elseif state == 'x' then
  return struct.pack('>i8', 2)
end
-- The member keeps its name: settle.lua finds it by the new score. The
-- record has a TTL (Reserve gave it one).
redis.call('ZADD', rkey, to, member)
local exp, made = to, false
--#include lib/keeprecord.lua
return struct.pack('>i8', 0)
