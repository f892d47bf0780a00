#!lua flags=no-writes
-- Which of the commands fence runs the calling user may not run on one key
-- and its high-water mark (redis.acl_check_cmd, Redis 7.0+); Store.Preflight.
-- Writes nothing.
-- KEYS[1] a key the application writes   KEYS[2] its mark (same slot)
-- ARGV    none.
-- Returns the refused commands, each as "COMMAND" or "COMMAND key" (empty
-- when all are allowed).
local checks = {
  {'GET', KEYS[2]}, {'SET', KEYS[2], '1'},
  {'SET', KEYS[1], 'v'}, {'HSET', KEYS[1], 'f', 'v'},
  {'GET', KEYS[1]}, {'HGET', KEYS[1], 'f'},
  {'EVALSHA', 'x', '0'}, {'EVALSHA_RO', 'x', '0'}, {'EVAL', 'x', '0'}, {'EVAL_RO', 'x', '0'},
}
local refused = {}
for _, c in ipairs(checks) do
  if not redis.acl_check_cmd(unpack(c)) then
    if string.sub(c[1], 1, 4) == 'EVAL' then
      refused[#refused + 1] = c[1]
    else
      refused[#refused + 1] = c[1] .. ' ' .. c[2]
    end
  end
end
return refused
