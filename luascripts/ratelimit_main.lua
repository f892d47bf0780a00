-- The decision: every limit is read first, then either all of them consume
-- the same count or none does. Reply: { granted, allowed, then per limit:
-- allowed, remaining, retry-after us, reset-after us }.
local mode = ARGV[1]
if READ_ONLY then
  mode = 'peek'
end
local n = tonumber(ARGV[2])
local count = tonumber(ARGV[4])

-- Monotonic guard: time on a key never goes backwards, so a server clock
-- stepped back cannot reopen a window or a bucket that was already spent.
-- Every limit keeps the latest time it was decided at; the call uses the
-- latest of those and the clock.
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  -- The server's clock, never the caller's (tests may pin it explicitly).
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local states = {}
for i = 1, count do
  local b = 4 + (i - 1) * 4
  local alg = ALG[ARGV[b + 1]]
  local st = alg.read(KEYS[i], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]))
  st.alg = alg
  states[i] = st
  if st.t and st.t > now then
    now = st.t
  end
end

local avail = math.huge
for i = 1, count do
  local st = states[i]
  st.alg.load(st, now)
  if st.avail < avail then
    avail = st.avail
  end
end

local granted = 0
if mode == 'take' then
  granted = math.min(n, avail)
elseif mode == 'allow' and avail >= n then
  granted = n
end
local need = n
if mode == 'take' then
  need = 1
end
local allowed = 0
if granted > 0 or (mode == 'peek' and avail >= n) then
  allowed = 1
end

local out = { granted, allowed, 0, 0, 0, 0 } -- sized for one limit
for i = 1, count do
  local st = states[i]
  local j = 2 + (i - 1) * 4
  if granted > 0 then
    local remaining, reset = st.alg.apply(st, granted)
    out[j + 1] = 1
    out[j + 2] = remaining
    out[j + 3] = 0
    out[j + 4] = math.ceil(reset)
  else
    local ok = 0
    if st.avail >= need then
      ok = 1
    end
    out[j + 1] = ok
    out[j + 2] = st.avail
    out[j + 3] = math.ceil(st.alg.retry(st, need))
    out[j + 4] = math.ceil(st.alg.reset(st))
    -- A rejection consumes nothing, but the time it was decided at is
    -- the latest this key has seen: keep it, or a clock stepped back
    -- afterwards would measure waits from an earlier time.
    if not READ_ONLY and (not st.t or now > st.t) then
      st.alg.touch(st)
    end
  end
end
return out
