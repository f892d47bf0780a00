-- How much of n a decision grants, given avail: up to n for 'take', all or
-- nothing for 'allow', none for 'peek'. Included by each algorithm's part.
local granted = 0
if mode == 'take' then
  granted = math.min(n, avail)
elseif mode == 'allow' and avail >= n then
  granted = n
end
