-- read(...) makes a decision's first read of a key and returns its reply,
-- or nil and the error to answer (lib/readerr.lua). A script that reads
-- once does so in line instead: a function is a closure built on every
-- call, and pcall through it cost the server about 1,500 instructions more.
local function read(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    --#include lib/readerr.lua
    return nil, e
  end
  return r
end
