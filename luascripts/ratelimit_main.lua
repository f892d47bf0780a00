-- The decision: every limit is read first, then either all of them consume
-- the same count or none does. Reply: { granted, allowed, now, then per
-- limit: allowed, remaining, retry-after us, reset-after us }.
local meta = KEYS[1]
local mode = ARGV[1]
if READ_ONLY then
  mode = 'peek'
end
local n = tonumber(ARGV[2])
local count = tonumber(ARGV[4])
local now = guarded_now(meta)

local states, algs = {}, {}
local avail, horizon = math.huge, 0
for i = 1, count do
  local b = 4 + (i - 1) * 4
  local alg = ALG[ARGV[b + 1]]
  local cap, win, rate = tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4])
  local st = alg.load(KEYS[1 + i], cap, win, rate, now)
  states[i], algs[i] = st, alg
  avail = math.min(avail, st.avail)
  horizon = math.max(horizon, alg.horizon(cap, win, rate))
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

local out = { granted, allowed, now }
for i = 1, count do
  local st, alg = states[i], algs[i]
  if granted > 0 then
    local remaining, reset = alg.apply(st, granted, meta)
    out[#out + 1] = 1
    out[#out + 1] = remaining
    out[#out + 1] = 0
    out[#out + 1] = math.ceil(reset)
  else
    local ok = 0
    if st.avail >= need then
      ok = 1
    end
    out[#out + 1] = ok
    out[#out + 1] = st.avail
    out[#out + 1] = math.ceil(alg.retry(st, need))
    out[#out + 1] = math.ceil(alg.reset(st))
  end
end

if not READ_ONLY then
  -- The guard lives at least as long as any state of this key, on every
  -- path, rejections included: it is only ever extended.
  redis.call('HSET', meta, 't', int(now))
  local want = ms_ceil(horizon)
  if redis.call('PTTL', meta) < want then
    redis.call('PEXPIRE', meta, want)
  end
end
return out
