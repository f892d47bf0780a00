-- Shared by every rate-limit script.
--
-- KEYS[i]  the state of limit i: one Redis key per limit, no other key. Each
--          holds the latest time (microseconds) a decision on it used, the
--          monotonic guard, beside the algorithm's own state.
-- ARGV[1] mode: 'allow', 'take' or 'peek'; ARGV[2] n;
-- ARGV[3] a pinned time in microseconds, or '' (always '' in production:
--         only the Go option WithPinnedClockForTests sets it);
-- ARGV[4] number of limits, then four per limit: algorithm ('log',
--         'counter', 'gcra'), capacity, and two numbers of the algorithm:
--         log and counter: window in microseconds, 0; GCRA: see its file.
--
-- Times are integer microseconds, exact in a Lua number (< 2^53).

-- Absorbs float noise in the counter's weighted sums (values are <=
-- capacity, so the noise is ~1e-16 of them), never a whole request.
local EPS = 1e-9

-- tostring() prints 14 significant digits, too few for a microsecond
-- timestamp: every integer that reaches a member goes through here.
local function int(x)
  return string.format('%.0f', x)
end

local function ms_ceil(us)
  local ms = math.ceil(us / 1000)
  if ms < 1 then ms = 1 end
  return ms
end

-- The server's clock, never the caller's (tests may pin it explicitly).
local function clock()
  if ARGV[3] ~= '' then
    return tonumber(ARGV[3])
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Counter and GCRA state is a short binary string: the guard time in 7
-- bytes, then the algorithm's counts, each in w bytes, w as small as the
-- largest count allows. Short enough for Redis' embedded string (with the
-- key, 88 bytes in MEMORY USAGE for small limits).
local function width(x)
  local w = 1
  while x >= 256 ^ w do
    w = w + 1
  end
  return w
end

-- The smallest wait d >= guess at which avail(now + d) >= need. The
-- counter computes guess in closed form; this only corrects float rounding
-- by a microsecond or two, so a client waiting exactly the returned time is
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

-- Each algorithm registers itself here with:
--   read(key, cap, a, b) -> st   reads the key; st.t is its guard time or nil
--   load(st, now)                sets st.avail at now
--   retry(st, need), reset(st)   microseconds until need / all are free
--   apply(st, k) -> remaining, reset   consumes k and writes, with a TTL
--   touch(st)                    a rejection at a time later than st.t:
--                                stores the time only (no TTL change needed:
--                                the key exists and its state is unchanged)
local ALG = {}
