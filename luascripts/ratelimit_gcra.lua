-- GCRA, kept as the equivalent continuous leaky bucket: the level (requests
-- still "in the bucket") at stamp s drains at rate/window per microsecond.
-- The theoretical arrival time of GCRA is s + level * window / rate. Storing
-- the small level rather than a 16-digit TAT keeps the float error far below
-- one request. O(1) memory per key. Capacity is the burst.
local function gcra_level(st, t)
  local drained = (t - st.s) * st.rate / st.win
  return math.max(st.l - drained, 0)
end

local function gcra_avail(st, t)
  return math.max(math.floor(st.cap - gcra_level(st, t) + EPS), 0)
end

ALG['gcra'] = {
  load = function(key, cap, win, rate, now)
    local h = redis.call('HMGET', key, 's', 'l')
    local st = { key = key, cap = cap, win = win, rate = rate, now = now,
      s = tonumber(h[1]) or now, l = tonumber(h[2]) or 0 }
    st.avail = gcra_avail(st, now)
    return st
  end,

  retry = function(st, need)
    if st.avail >= need then
      return 0
    end
    local excess = gcra_level(st, st.now) - (st.cap - need)
    return settle(excess * st.win / st.rate, need, function(t) return gcra_avail(st, t) end, st.now)
  end,

  reset = function(st)
    return math.ceil(gcra_level(st, st.now) * st.win / st.rate)
  end,

  apply = function(st, k)
    local level = gcra_level(st, st.now) + k
    st.s, st.l = st.now, level
    local full = math.ceil(level * st.win / st.rate)
    redis.call('HSET', st.key, 's', int(st.now), 'l', string.format('%.17g', level))
    redis.call('PEXPIRE', st.key, ms_ceil(full))
    st.avail = gcra_avail(st, st.now)
    return st.avail, full
  end,

  horizon = function(cap, win, rate)
    return cap * win / rate
  end,
}
