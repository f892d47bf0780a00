-- The record's TTL, after lib/reservations.lua (its frame), from the
-- locals exp, an expiry just set, and made, whether this call may have
-- made the record: the record lives hold past exp when no member expires
-- later. GT leaves a later expiry's TTL, and NX gives one to a record this
-- call made (GT counts no TTL as forever). A settle moves no expiry, so it
-- keeps the TTL as it is. (Reading the newest member instead cost Reserve
-- 14,000 server instructions more.)
-- The hold is how long after it was charged a request can still count
-- against one of ls: the log's window, the counter's two buckets, GCRA's
-- drain of a full burst.
do
  local hold = 0
  for i = 1, m do
    local L = ls[i]
    local d = L.a
    if L.alg == 'c' then
      d = 2 * L.a
    elseif L.alg == 'g' then
      d = math.ceil(L.cap * L.a / L.b)
    end
    hold = math.max(hold, d)
  end
  local ms = string.format('%d', math.max(math.ceil((exp - now + hold) / 1000), 1))
  if redis.call('PEXPIRE', rkey, ms, 'GT') == 0 and made then
    redis.call('PEXPIRE', rkey, ms, 'NX')
  end
end
