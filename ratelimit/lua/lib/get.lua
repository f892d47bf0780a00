-- v: the state of the local key, or false, read in line (a function is a
-- closure built on every call); a failed read is answered as
-- lib/readerr.lua says.
local v = redis.pcall('GET', key)
if type(v) == 'table' then
  local r = v
  --#include lib/readerr.lua
  return redis.error_reply(e)
end
