-- reset.lua: forgets a rule's state on one key (Limiter.Reset).
-- KEYS and ARGV are every script's (see wire.go); only ARGV[3 + i], each
-- limit's capacity, is read.
-- Reply:   what any script replies (see wire.go), for the state it leaves:
--          nothing granted, every limit full and untouched.
redis.call('DEL', unpack(KEYS))
local out = { 0, 1 }
for i = 1, #KEYS do
  local cap = struct.unpack('>I8', ARGV[3 + i], 2)
  out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = 1, cap, 0, 0
end
return struct.pack('>' .. string.rep('i8', #out), unpack(out))
