-- Sliding-window log: one sorted-set member per admitted request, scored by
-- its time. Exact. Memory O(capacity) per key. Rejected requests are never
-- recorded.
ALG['log'] = {
  load = function(key, cap, win, _, now)
    local floor = now - win
    local count
    if READ_ONLY then
      count = redis.call('ZCOUNT', key, '(' .. int(floor), '+inf')
    else
      redis.call('ZREMRANGEBYSCORE', key, '-inf', int(floor))
      count = redis.call('ZCARD', key)
    end
    return { key = key, cap = cap, win = win, now = now, count = count, avail = math.max(cap - count, 0) }
  end,

  -- Wait until enough of the oldest live members age out.
  retry = function(st, need)
    if st.avail >= need then
      return 0
    end
    local idx = st.count - st.cap + need - 1
    local r = redis.call('ZRANGEBYSCORE', st.key, '(' .. int(st.now - st.win), '+inf', 'WITHSCORES', 'LIMIT', idx, 1)
    return tonumber(r[2]) + st.win - st.now
  end,

  reset = function(st)
    if st.count == 0 then
      return 0
    end
    local r = redis.call('ZRANGE', st.key, -1, -1, 'WITHSCORES')
    return math.max(tonumber(r[2]) + st.win - st.now, 0)
  end,

  -- Members are "<time>-<sequence>": the per-key sequence (HINCRBY on the
  -- meta hash) makes them unique even for many requests in one microsecond,
  -- so ZADD never overwrites one and nothing is undercounted.
  apply = function(st, k, meta)
    local last = redis.call('HINCRBY', meta, 's', k)
    local score = int(st.now)
    local args = {}
    for seq = last - k + 1, last do
      args[#args + 1] = score
      args[#args + 1] = score .. '-' .. int(seq)
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

  horizon = function(cap, win, _)
    return win
  end,
}
