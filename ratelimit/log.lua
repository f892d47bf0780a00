-- log.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- Sliding-window log, one limit: one sorted-set member per admitted request,
-- scored by its time in µs. Exact; rejected requests are never recorded.
-- Decides n requests and, unless the mode is 'peek', consumes them when
-- admitted.
--
-- KEYS[1]  the limit's log. Member names are integers (Redis stores them in
--          8 bytes, not as text): (score mod window) × capacity + c - 1,
--          c running from the number of live members before the call plus
--          one. Live members lie within one window, so no two share a
--          score mod window unless they share the score; at one score the
--          live count only grows from call to call (time on a key never
--          goes back, and nothing at now - window < score is trimmed), so
--          each call's c follow all earlier ones: names are unique. The
--          guard is the newest member's score or, after a rejection at a
--          later time, the time appended to its name ("<name>~<time>").
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then
--          the limit: 'l', capacity, window in µs and 0.
-- Reply:   every script's (wire.go), for a policy of one: granted, allowed,
--          then allowed, remaining, retry-after µs and reset-after µs.
--
-- The limit's numbers come packed and the reply goes packed: a table reply
-- and text numbers cost the server more (parsing and printing numbers, a
-- Lua table per call) than the struct calls that replace them.
--
-- Flat on purpose: no function is built per call, and a table only for
-- AllowN/Take of more than one request. Times and names (integers below
-- 2^53) go through '%d': tostring prints 14 significant digits, too few
-- for a µs timestamp, and '%.0f' costs the server 5,000 instructions a
-- call where '%d' costs 2,000. A number passed to redis.call is printed
-- by Redis with '%.17g' (2,500 instructions): constants go as strings.
local n, mode = tonumber(ARGV[1]), ARGV[2]
local cap, win = struct.unpack('>I8I8I8', ARGV[4], 2)
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
end

-- read(...), for the first read of a key, before anything is written: a
-- redis.pcall that answers TRYAGAIN where a key expired in a slot being
-- migrated (readFunction in scripts.go, which puts it on line 2).

local key = KEYS[1]
local newest, err = read('ZRANGE', key, '-1', '-1', 'WITHSCORES')
if err then
  return redis.error_reply(err)
end
local last, score, base, guard = newest[1], 0, false, -1
if last then
  score = tonumber(newest[2])
  guard, base = score, last
  local at = string.find(last, '~', 1, true)
  if at then
    guard, base = math.max(score, tonumber(string.sub(last, at + 1))), string.sub(last, 1, at - 1)
  end
  -- Time on a key never goes back: a clock stepped back cannot reopen it.
  if guard > now then
    now = guard
  end
end
local floor = string.format('%d', now - win)
local count = 0
if last then
  count = redis.call('ZCOUNT', key, '(' .. floor, '+inf')
end
local avail = math.max(cap - count, 0)

local granted = 0
if mode == 'take' then
  granted = math.min(n, avail)
elseif mode == 'allow' and avail >= n then
  granted = n
end
if granted > 0 then
  -- Every write that adds comes before any that removes, so the set is
  -- never empty in between: an emptied set is a deleted key, and on a
  -- Cluster, in a slot being migrated, a key the node does not have is
  -- another node's: the write after it would fail, with the removal kept.
  -- Each write names other members than those before it, so the set ends
  -- as in any order.
  if base ~= last and score > now - win then
    -- The guard moves to the new members: give the renamed one its name back.
    redis.call('ZADD', key, string.format('%d', score), base)
    redis.call('ZREM', key, last)
  end
  local at = string.format('%d', now)
  local r = now - math.floor(now / win) * win -- now mod win, exact:
  if r < 0 then r = r + win elseif r >= win then r = r - win end -- the float quotient may round
  local name = r * cap + count -- the name of c = count + 1
  if granted == 1 then
    redis.call('ZADD', key, at, string.format('%d', name))
  else
    local args = {}
    for c = 0, granted - 1 do
      args[#args + 1] = at
      args[#args + 1] = string.format('%d', name + c)
      if #args >= 1000 then
        redis.call('ZADD', key, unpack(args))
        args = {}
      end
    end
    if #args > 0 then
      redis.call('ZADD', key, unpack(args))
    end
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', floor)
  redis.call('PEXPIRE', key, string.format('%d', math.ceil(win / 1000)))
  return struct.pack('>i8i8i8i8i8i8', granted, 1, 1, avail - granted, 0, win)
end

local need = n
if mode == 'take' then
  need = 1
end
local reset = 0
if count > 0 then
  reset = math.max(score + win - now, 0)
end
if avail >= need then -- only a peek gets here with room
  return struct.pack('>i8i8i8i8i8i8', 0, 1, 1, avail, 0, reset)
end
-- Wait until enough of the oldest live members age out.
local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. floor, '+inf', 'WITHSCORES', 'LIMIT', string.format('%d', count - cap + need - 1), '1')
local d = tonumber(oldest[2]) + win - now

-- A rejection consumes nothing but keeps its time, the latest the key has
-- seen, in the newest member's name (its score unchanged): the set holds
-- exactly the admitted requests and nothing else. Add before removing:
-- removing the only member first would delete the key, and the ZADD would
-- make a new one without a TTL.
if mode ~= 'peek' and now > guard then
  redis.call('ZADD', key, string.format('%d', score), base .. '~' .. string.format('%d', now))
  redis.call('ZREM', key, last)
end
return struct.pack('>i8i8i8i8i8i8', 0, 0, 0, avail, d, reset)
