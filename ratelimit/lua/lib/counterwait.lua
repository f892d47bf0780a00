-- The counter's wait for need requests, d µs, from the locals cap, need,
-- cur, prev, win, e, start, now and eps.
-- The wait: a closed-form guess, then corrected by a µs or two for float
-- rounding, so a client waiting exactly the returned time is admitted.
local target = cap - need -- the weighted count must fall to this
local d = 0
if cur > target then
  d = (win - e) + win - target * win / cur -- this bucket becomes the weighted one
elseif prev > 0 then
  d = win - (target - cur) * win / prev - e -- prev's weight only has to shrink
end
d = math.max(math.ceil(d), 0)
for _ = 1, 64 do
  local at = now + d
  local ce, pe, el = 0, 0, 0 -- counts and elapsed in at's bucket
  if at < start + win then
    ce, pe, el = cur, prev, at - start
  elseif at < start + 2 * win then
    pe, el = cur, at - start - win
  end
  if math.floor(cap - pe * (win - el) / win - ce + eps) >= need then
    break
  end
  d = d + 1
end
