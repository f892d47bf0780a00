-- floorDiv: the local quo = floor(num / den), exact for integers below
-- 2^53, where the float quotient may round up or down by one.
local quo = math.floor(num / den)
if quo * den > num then
  quo = quo - 1
elseif (quo + 1) * den <= num then
  quo = quo + 1
end
