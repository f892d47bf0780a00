-- GCRA's reset, from the locals q and drain, into the local reset.
-- reset = ceil(q / drain): when the backlog is empty
reset = math.floor(q / drain)
if reset * drain > q then
  reset = reset - 1
elseif (reset + 1) * drain <= q then
  reset = reset + 1
end
if reset * drain < q then
  reset = reset + 1
end
