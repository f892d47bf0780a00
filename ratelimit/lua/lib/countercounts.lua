-- The counter's counts at now, from its state (the locals t, c and p: the
-- time it was written at and its counts then) and start, the start of
-- now's bucket, into the locals cur and prev (0 when they no longer count).
if t >= start then
  cur, prev = c, p
elseif t >= start - win then
  prev = c
end
