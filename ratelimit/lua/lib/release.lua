-- The give-backs of reserve.lua and settle.lua, after lib/reservations.lua
-- (its frame: m, ls, rkey, now), and the release that every Reserve,
-- Commit and Cancel makes first, in line: it runs where this is included.

-- giveBack gives back, on every limit, what the outstanding member
-- charged beyond keep units, and returns the amount it charged.
local function giveBack(member, keep)
  local at, k = struct.unpack('>I8I8', member, idLen + 2)
  if keep >= k then
    return k
  end
  -- one returns x of the k units a reservation charged at time at to
  -- limit L (state in key) at now, keep being the units kept: the log's
  -- members keep..k-1 of those it added (first is the first one's name).
  -- Only what the limit still counts is given back, and never more than the
  -- reservation added; see ADR 0017 for why no interleaving exceeds a limit.
  -- (Built here, a closure is paid for only when something is given back.)
  local function one(key, L, first)
    local x = k - keep
    if L.alg == 'l' then
      local win = L.a
      local newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
      if not newest[1] then
        return
      end
      local last, score, base, guard = newest[1], tonumber(newest[2]), false, -1
      --#include lib/logguard.lua
      local t = math.max(now, guard)
      if at <= t - win then
        return -- aged out: nothing counts the members any more
      end
      -- Live members within one window have distinct names (log.lua), and
      -- none is newer than t < at + window: these names are the
      -- reservation's own members.
      local names, renamed = {}, false
      for c = keep, k - 1 do
        local nm = string.format('%d', first + c)
        names[#names + 1] = nm
        if nm == base and last ~= base then
          renamed = true
        end
        if #names >= 1000 then
          redis.call('ZREM', key, unpack(names))
          names = {}
        end
      end
      if renamed then
        names[#names + 1] = last
      end
      if #names > 0 then
        redis.call('ZREM', key, unpack(names))
      end
      -- The guard stays on the newest member left, past every score left:
      -- members at the score t counted fewer after the removal, so a later
      -- call at t would name its members as some of those are named.
      newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
      if newest[1] then
        local last, score, base, guard = newest[1], tonumber(newest[2]), false, -1
        --#include lib/logguard.lua
        local g = t
        if score >= t then
          g = t + 1
        end
        if g > guard then
          redis.call('ZADD', key, string.format('%d', score), base .. '~' .. string.format('%d', g))
          redis.call('ZREM', key, last)
        end
      end
    elseif L.alg == 'c' then
      local v = redis.call('GET', key)
      if not v then
        return
      end
      local win = L.a
      local t, c, p, fmt
      --#include lib/counterdecode.lua
      local u = math.max(now, t) -- the time on the key
      --#include lib/bucket.lua now=u
      local start, cur, prev = u - e, 0, 0
      --#include lib/countercounts.lua
      --#include lib/bucket.lua now=at e=e0
      if at - e0 == start then -- the reservation was charged into this bucket
        cur = cur - math.min(cur, x)
      elseif at - e0 == start - win then
        prev = prev - math.min(prev, x)
      else
        return -- its bucket no longer counts
      end
      -- The counts only shrank: the stored width and TTL fit.
      redis.call('SET', key, struct.pack(fmt, u, cur, prev), 'KEEPTTL')
    else
      local v = redis.call('GET', key)
      if not v then
        return
      end
      local unit, drain = L.a, L.b
      local t, q, fmt
      --#include lib/gcradecode.lua
      local u = math.max(now, t) -- the time on the key
      q = math.max(q - (u - t) * drain, 0)
      -- What the x units still add to the backlog: at most q, and at least
      -- x·unit less what drained since at beyond the kept units (ADR 0017).
      local r = math.min(math.max(x * unit - math.max((u - at) * drain - keep * unit, 0), 0), q)
      q = q - r
      --#include lib/width.lua most=q
      redis.call('SET', key, struct.pack('>I7I' .. string.sub('12345678', w, w), u, q), 'PX',
        string.format('%d', math.max(math.ceil(q / drain / 1000), 1)))
    end
  end
  for i = 1, m do
    one(KEYS[i], ls[i], struct.unpack('>I8', member, idLen + 10 + 8 * i))
  end
  return k
end

-- Release: give back all of every outstanding reservation of the rule
-- past its expiry at now, and drop every settled one past it (at most 256
-- a call: more are released by the next).
do
  local gone = redis.call('ZRANGEBYSCORE', rkey, '-inf', string.format('%d', now), 'LIMIT', '0', '256')
  for _, member in ipairs(gone) do
    if string.sub(member, idLen + 1, idLen + 1) == 'r' then
      giveBack(member, 0)
    end
  end
  if #gone > 0 then
    -- Removing every member would delete the record, and on a Cluster, in
    -- a slot being migrated, the node then refuses any later command on it
    -- (reserve.lua's ZADD), keeping what was written before. A record that
    -- would be emptied keeps a placeholder instead: a member named '' just
    -- past now, which no lookup matches and the next release drops.
    if #gone == redis.call('ZCOUNT', rkey, '-inf', '+inf') then -- (ZCARD would add a command to the ACL)
      redis.call('ZADD', rkey, string.format('%d', now + 1), '')
    end
    redis.call('ZREM', rkey, unpack(gone))
  end
end
