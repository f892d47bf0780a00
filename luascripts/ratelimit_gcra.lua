-- GCRA, kept as the equivalent leaky bucket in exact integers: one request
-- adds `unit` to the backlog q, which drains `drain` per microsecond
-- (unit / drain = window / rate, the emission interval, reduced by their
-- greatest common divisor in Go). q / drain is how far GCRA's theoretical
-- arrival time lies ahead of the stamp t. Capacity is the burst; the Go side
-- checks capacity * unit < 2^53, so every value here is an exact integer and
-- every wait is exact. O(1) memory per key.
-- State: a string of t (the guard and stamp of q, 7 bytes) and q (w bytes).
local function gcra_backlog(st, t)
  return math.max(st.q - (t - st.t) * st.drain, 0)
end

-- floor(a / b) and ceil(a / b) for non-negative integers below 2^53,
-- corrected where the float quotient rounds across an integer.
local function idiv(a, b)
  local d = math.floor(a / b)
  if d * b > a then
    d = d - 1
  elseif (d + 1) * b <= a then
    d = d + 1
  end
  return d
end

local function cdiv(a, b)
  local d = idiv(a, b)
  if d * b < a then
    d = d + 1
  end
  return d
end

local function gcra_avail(st, q)
  return math.max(idiv(st.cap * st.unit - q, st.unit), 0)
end

local function gcra_store(st, q)
  st.q, st.t = q, st.now
  local w = width(q)
  redis.call('SET', st.key, struct.pack('>I7I' .. w, st.now, q), 'PX', ms_ceil(cdiv(q, st.drain)))
end

ALG['gcra'] = {
  read = function(key, cap, unit, drain)
    local st = { key = key, cap = cap, unit = unit, drain = drain, q = 0 }
    local v = redis.call('GET', key)
    if v then
      st.t, st.q = struct.unpack('>I7I' .. (#v - 7), v)
    end
    return st
  end,

  load = function(st, now)
    st.now = now
    st.qnow = 0
    if st.t then
      st.qnow = gcra_backlog(st, now)
    end
    st.avail = gcra_avail(st, st.qnow)
  end,

  -- The backlog must fall to what leaves room for need.
  retry = function(st, need)
    if st.avail >= need then
      return 0
    end
    return cdiv(st.qnow - (st.cap - need) * st.unit, st.drain)
  end,

  reset = function(st)
    return cdiv(st.qnow, st.drain)
  end,

  apply = function(st, k)
    gcra_store(st, st.qnow + k * st.unit)
    st.avail = gcra_avail(st, st.q)
    return st.avail, cdiv(st.q, st.drain)
  end,

  touch = function(st)
    if st.qnow > 0 then
      gcra_store(st, st.qnow)
    end
  end,
}
