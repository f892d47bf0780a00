-- Sliding-window counter: counts per fixed bucket of one window, and the
-- previous bucket's count weighted by how much of it still overlaps the
-- sliding window. O(1) memory per key. It assumes the previous bucket's
-- traffic was uniform; see the package documentation for its error.
-- State: a string of t (the guard: the latest time decided at, 7 bytes),
-- then c (the count of t's bucket) and p (the count of the bucket before),
-- w bytes each. The bucket index is floor(t / window).

-- Absorbs float noise in the weighted sums (values are <= capacity, so the
-- noise is ~1e-16 of them), never a whole request. A true shortfall is a
-- multiple of 1/window (in µs), so the epsilon also stays under half of
-- that: on a day-long window 1e-9 alone would round a real shortfall of a
-- few tens of µs up into an extra request.
local EPS = 1e-9

-- The smallest wait d >= guess at which avail(now + d) >= need. retry
-- computes guess in closed form; this only corrects float rounding by a
-- microsecond or two, so a client waiting exactly the returned time is
-- admitted.
local function settle(guess, need, avail_at, now)
  local d = math.max(math.ceil(guess), 0)
  for _ = 1, 64 do
    if avail_at(now + d) >= need then
      return d
    end
    d = d + 1
  end
  return d
end

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
  return math.max(math.floor(st.cap - est + math.min(EPS, 0.5 / st.win)), 0)
end

-- How long until the state at now is empty: the key's TTL.
local function counter_reset(st)
  local _, cur, prev, e = counter_parts(st, st.now)
  if cur > 0 then
    return 2 * st.win - e
  elseif prev > 0 then
    return st.win - e
  end
  return 0
end

-- Rebases the state on now, with cur more requests in now's bucket, and
-- stores it (with the TTL of when it will be empty).
local function counter_store(st, k)
  local idx, cur, prev = counter_parts(st, st.now)
  st.i, st.c, st.p, st.t = idx, cur + k, prev, st.now
  local w = width(math.max(st.c, st.p))
  local v = struct.pack('>I7I' .. w .. 'I' .. w, st.now, st.c, st.p)
  redis.call('SET', st.key, v, 'PX', ms_ceil(counter_reset(st)))
end

ALG['counter'] = {
  read = function(key, cap, win, _)
    local st = { key = key, cap = cap, win = win, c = 0, p = 0, t = false, i = false,
      now = false, avail = false, alg = false, fmt = false }
    local v = redis.call('GET', key)
    if v then
      local f = 'I' .. (#v - 7) / 2
      st.fmt = '>I7' .. f .. f
      st.t, st.c, st.p = struct.unpack(st.fmt, v)
      st.i = math.floor(st.t / win)
    end
    return st
  end,

  load = function(st, now)
    st.now = now
    st.avail = counter_avail(st, now)
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

  reset = counter_reset,

  apply = function(st, k)
    counter_store(st, k)
    st.avail = counter_avail(st, st.now)
    return st.avail, counter_reset(st)
  end,

  -- Rebased on now, the counts are no larger than those stored, so they
  -- fit the stored width, and they empty when the key's TTL says: keep both.
  touch = function(st)
    local _, cur, prev = counter_parts(st, st.now)
    if cur + prev > 0 then
      redis.call('SET', st.key, struct.pack(st.fmt, st.now, cur, prev), 'KEEPTTL')
    end
  end,
}
