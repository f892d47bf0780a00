-- Sliding-window log: one sorted-set member per admitted request, scored by
-- its time. Exact. Memory O(capacity) per key. Rejected requests are never
-- recorded.
--
-- Members are "<time>-<c>", c running from the number of live members
-- before the call plus one: unique even for many requests in one
-- microsecond. Time on the key never goes back, so members scored `now`
-- were all added by calls at `now`, and at one `now` the trim removes none
-- of the live members (all are later than now - window): the live count
-- only grows from call to call, and each call's c follow all earlier ones.
--
-- The guard is the score of the last member, the newest request. A
-- rejection at a later time renames that member "<time>-<c>~<guard>" (score
-- unchanged), so the set holds exactly the admitted requests and nothing
-- else.
-- tostring() prints 14 significant digits, too few for a microsecond
-- timestamp: every time that reaches a member or a range goes through here.
local function int(x)
  return string.format('%.0f', x)
end

local function log_guard(member, score)
  local at = string.find(member, '~', 1, true)
  if at then
    return math.max(score, tonumber(string.sub(member, at + 1))), string.sub(member, 1, at - 1)
  end
  return score, member
end

ALG['log'] = {
  read = function(key, cap, win, _)
    local st = { key = key, cap = cap, win = win, count = 0, t = false, last = false,
      score = false, base = false, now = false, floor = false, avail = false, alg = false }
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if last[1] then
      st.last, st.score = last[1], tonumber(last[2])
      st.t, st.base = log_guard(st.last, st.score)
    end
    return st
  end,

  load = function(st, now)
    st.now, st.floor = now, now - st.win
    if st.t then
      st.count = redis.call('ZCOUNT', st.key, '(' .. int(st.floor), '+inf')
    end
    st.avail = math.max(st.cap - st.count, 0)
  end,

  -- Wait until enough of the oldest live members age out.
  retry = function(st, need)
    if st.avail >= need then
      return 0
    end
    local idx = st.count - st.cap + need - 1
    local r = redis.call('ZRANGEBYSCORE', st.key, '(' .. int(st.floor), '+inf', 'WITHSCORES', 'LIMIT', idx, 1)
    return tonumber(r[2]) + st.win - st.now
  end,

  reset = function(st)
    if st.count == 0 then
      return 0
    end
    return math.max(st.score + st.win - st.now, 0)
  end,

  apply = function(st, k)
    redis.call('ZREMRANGEBYSCORE', st.key, '-inf', int(st.floor))
    local score = int(st.now)
    local args = {}
    for c = st.count + 1, st.count + k do
      args[#args + 1] = score
      args[#args + 1] = score .. '-' .. c
      if #args >= 1000 then
        redis.call('ZADD', st.key, unpack(args))
        args = {}
      end
    end
    if #args > 0 then
      redis.call('ZADD', st.key, unpack(args))
    end
    redis.call('PEXPIRE', st.key, ms_ceil(st.win))
    st.count = st.count + k
    st.avail = st.avail - k
    return st.avail, st.win
  end,

  touch = function(st)
    if st.count > 0 then
      -- Add before removing: removing the only entry first would empty the
      -- set, Redis would delete the key, and the ZADD would make a new key
      -- without a TTL. The names differ: the new one carries a later time.
      redis.call('ZADD', st.key, int(st.score), st.base .. '~' .. int(st.now))
      redis.call('ZREM', st.key, st.last)
    end
  end,
}
