-- ceilDiv: the local quo = ceil(num / den), exact as lib/floordiv.lua's.
--#include lib/floordiv.lua
if quo * den < num then
  quo = quo + 1
end
