-- GCRA, kept as the equivalent leaky bucket in exact integers: one request
-- adds `unit` to the backlog q, which drains `drain` per microsecond
-- (unit / drain = window / rate, the emission interval, reduced by their
-- greatest common divisor in Go). q / drain is how far GCRA's theoretical
-- arrival time lies ahead of the stamp t. Capacity is the burst; the Go side
-- checks capacity * unit < 2^53, so every value here is an exact integer and
-- every wait is exact. O(1) memory per key.
-- State: a string of t (the guard and stamp of q, 7 bytes) and q (w bytes).
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
  local reset = cdiv(q, st.drain)
  redis.call('SET', st.key, struct.pack('>I7I' .. width(q), st.now, q), 'PX', ms_ceil(reset))
  return reset
end

ALG['gcra'] = {
  read = function(key, cap, unit, drain)
    local st = { key = key, cap = cap, unit = unit, drain = drain, q = 0, t = false,
      now = false, qnow = 0, avail = false, alg = false, fmt = false }
    local v = redis.call('GET', key)
    if v then
      st.fmt = '>I7I' .. (#v - 7)
      st.t, st.q = struct.unpack(st.fmt, v)
    end
    return st
  end,

  load = function(st, now)
    st.now = now
    if st.t then
      st.qnow = math.max(st.q - (now - st.t) * st.drain, 0)
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
    local reset = gcra_store(st, st.qnow + k * st.unit)
    st.avail = gcra_avail(st, st.q)
    return st.avail, reset
  end,

  -- The backlog only drained since it was stored, so it fits the stored
  -- width, and it still empties when the key's TTL says: keep both.
  touch = function(st)
    if st.qnow > 0 then
      redis.call('SET', st.key, struct.pack(st.fmt, st.now, st.qnow), 'KEEPTTL')
    end
  end,
}
