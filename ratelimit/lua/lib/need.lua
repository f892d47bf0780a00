-- need: the requests a rejection's wait is for, n, or 1 for a Take (it
-- takes what there is).
local need = n
if mode == 'take' then
  need = 1
end
