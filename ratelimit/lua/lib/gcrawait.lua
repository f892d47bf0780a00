-- GCRA's wait for need requests, d µs, from the locals q, cap, need, unit
-- and drain.
-- The backlog must fall to what leaves room for need: ceil(excess / drain).
local excess = q - (cap - need) * unit
local d = math.floor(excess / drain)
if d * drain > excess then
  d = d - 1
elseif (d + 1) * drain <= excess then
  d = d + 1
end
if d * drain < excess then
  d = d + 1
end
