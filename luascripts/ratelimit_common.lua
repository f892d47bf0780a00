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

-- Every function defined here and in the algorithm files is a closure the
-- server builds on every call (about 30 ns each), and every table field
-- added after construction may grow the table: the parts define only what
-- their scripts use, and state tables are built with all their fields.

local function ms_ceil(us)
  local ms = math.ceil(us / 1000)
  if ms < 1 then ms = 1 end
  return ms
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

-- Each algorithm registers itself here with:
--   read(key, cap, a, b) -> st   reads the key; st.t is its guard time, or
--                                false for a key with no state
--   load(st, now)                sets st.avail at now
--   retry(st, need), reset(st)   microseconds until need / all are free
--   apply(st, k) -> remaining, reset   consumes k and writes, with a TTL
--   touch(st)                    a rejection at a time later than st.t:
--                                stores that time and leaves the state as it
--                                was; a key with no state is left alone
local ALG = {}
