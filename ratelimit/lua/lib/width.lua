-- The local w: the bytes most needs as an unsigned integer (a state is
-- stored in as few as its largest number needs).
local w = 1
while most >= 256 ^ w do
  w = w + 1
end
