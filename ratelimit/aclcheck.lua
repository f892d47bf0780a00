#!lua flags=no-writes
-- aclcheck.lua: which of the commands ratelimit runs the calling user may
-- not run on a key under the Limiter's prefix (redis.acl_check_cmd, Redis
-- 7.0+); Limiter.Preflight. Writes nothing.
-- KEYS[1]  a limit's key under the Limiter's prefix (see keys.go).
-- ARGV     none.
-- Reply:   the refused commands, each as "COMMAND" or "COMMAND key" (empty
--          when all are allowed).
local k = KEYS[1]
local checks = {
  {'TIME'}, {'GET', k}, {'SET', k, 'v'}, {'PEXPIRE', k, '1'}, {'DEL', k},
  {'ZADD', k, '1', 'm'}, {'ZCOUNT', k, '0', '1'}, {'ZRANGE', k, '0', '1'},
  {'ZRANGEBYSCORE', k, '0', '1'}, {'ZREM', k, 'm'}, {'ZREMRANGEBYSCORE', k, '0', '1'},
  {'EVALSHA', 'x', '0'}, {'EVALSHA_RO', 'x', '0'}, {'EVAL', 'x', '0'}, {'EVAL_RO', 'x', '0'},
}
local refused = {}
for _, c in ipairs(checks) do
  if not redis.acl_check_cmd(unpack(c)) then
    if c[1] == 'TIME' or string.sub(c[1], 1, 4) == 'EVAL' then
      refused[#refused + 1] = c[1]
    else
      refused[#refused + 1] = c[1] .. ' ' .. c[2]
    end
  end
end
return refused
