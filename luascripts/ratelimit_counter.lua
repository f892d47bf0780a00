-- Sliding-window counter: counts per fixed bucket of one window, and the
-- previous bucket's count weighted by how much of it still overlaps the
-- sliding window. O(1) memory per key. It assumes the previous bucket's
-- traffic was uniform; see the package documentation for its error.
-- State: hash with i (bucket index), c (its count), p (count of bucket i-1).
local function counter_parts(st, t)
  local idx = math.floor(t / st.win)
  local cur, prev = 0, 0
  if st.i == idx then
    cur, prev = st.c, st.p
  elseif st.i == idx - 1 then
    prev = st.c
  end
  return idx, cur, prev, t - idx * st.win
end

local function counter_avail(st, t)
  local _, cur, prev, e = counter_parts(st, t)
  local est = prev * (st.win - e) / st.win + cur
  return math.max(math.floor(st.cap - est + EPS), 0)
end

ALG['counter'] = {
  load = function(key, cap, win, _, now)
    local h = redis.call('HMGET', key, 'i', 'c', 'p')
    local st = { key = key, cap = cap, win = win, now = now,
      i = tonumber(h[1]), c = tonumber(h[2]) or 0, p = tonumber(h[3]) or 0 }
    st.avail = counter_avail(st, now)
    return st
  end,

  retry = function(st, need)
    if st.avail >= need then
      return 0
    end
    local _, cur, prev, e = counter_parts(st, st.now)
    local target = st.cap - need -- the estimate must fall to this
    local guess = 0
    if cur <= target then
      -- The previous bucket's weight only has to shrink enough.
      if prev > 0 then
        guess = st.win - (target - cur) * st.win / prev - e
      end
    else
      -- Only the next bucket, where this bucket becomes the weighted one.
      guess = (st.win - e) + st.win - target * st.win / cur
    end
    return settle(guess, need, function(t) return counter_avail(st, t) end, st.now)
  end,

  reset = function(st)
    local _, cur, prev, e = counter_parts(st, st.now)
    if cur > 0 then
      return 2 * st.win - e
    elseif prev > 0 then
      return st.win - e
    end
    return 0
  end,

  apply = function(st, k)
    local idx, cur, prev, e = counter_parts(st, st.now)
    st.i, st.c, st.p = idx, cur + k, prev
    redis.call('HSET', st.key, 'i', int(idx), 'c', int(cur + k), 'p', int(prev))
    redis.call('PEXPIRE', st.key, ms_ceil(2 * st.win - e))
    st.avail = counter_avail(st, st.now)
    return st.avail, 2 * st.win - e
  end,

  horizon = function(cap, win, _)
    return 2 * win
  end,
}
