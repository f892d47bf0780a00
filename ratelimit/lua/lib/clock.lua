-- now: the pinned time ARGV[3], else the server's clock, in µs.
local now
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
else
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
end
