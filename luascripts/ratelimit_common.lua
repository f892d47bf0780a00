-- Shared by both rate-limit scripts.
--
-- KEYS[1]   the key's meta hash: field 't' is the latest time (microseconds)
--           a decision on this key used, field 's' the sequence that makes
--           sliding-log members unique.
-- KEYS[1+i] the state of limit i.
-- ARGV[1] mode: 'allow', 'take' or 'peek'; ARGV[2] n;
-- ARGV[3] a pinned time in microseconds, or '' (always '' in production:
--         only the Go option WithPinnedClockForTests sets it);
-- ARGV[4] number of limits, then four per limit: algorithm ('log',
--         'counter', 'gcra'), capacity, window in microseconds, rate
--         (GCRA: requests per window; 0 for the others).
--
-- Times are integer microseconds, exact in a Lua number (< 2^53).

-- Absorbs float noise in the weighted sums (values are <= capacity, so the
-- noise is ~1e-16 of them), never a whole request.
local EPS = 1e-9

-- tostring() prints 14 significant digits, too few for a microsecond
-- timestamp: every integer that reaches a key or a member goes through here.
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

-- Monotonic guard: time on one key never goes backwards, so a server clock
-- stepped back cannot reopen a window or a bucket that was already spent.
local function guarded_now(meta)
  local now = clock()
  local last = tonumber(redis.call('HGET', meta, 't'))
  if last and last > now then
    now = last
  end
  return now
end

-- The smallest wait d >= guess at which avail(now + d) >= need. The
-- algorithms compute guess in closed form; this only corrects float
-- rounding by a microsecond or two, so a client waiting exactly the
-- returned time is admitted.
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

local ALG = {}
