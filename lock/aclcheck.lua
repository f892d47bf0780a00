#!lua flags=no-writes
-- Which of the commands lock runs the calling user may not run on this
-- lock's keys and channel (redis.acl_check_cmd, Redis 7.0+). Writes nothing.
-- KEYS[1] a lock   KEYS[2] its counter   ARGV[1] its release channel
-- ARGV[2] the token mode, as acquire.lua's ARGV[3]: "" for counter tokens
--         (INCR), anything else for hybrid ones (TIME, and SET on the counter)
-- Returns the names of the refused commands (empty when all are allowed).
local checks = {
  {'GET', KEYS[1]}, {'SET', KEYS[1], 'v'}, {'PTTL', KEYS[1]}, {'DEL', KEYS[1]},
  {'PEXPIRE', KEYS[1], '1'}, {'MGET', KEYS[1], KEYS[2]}, {'GET', KEYS[2]},
  {'PUBLISH', ARGV[1], ''}, {'SUBSCRIBE', ARGV[1]},
  {'EVALSHA', 'x', '0'}, {'EVALSHA_RO', 'x', '0'}, {'EVAL', 'x', '0'}, {'EVAL_RO', 'x', '0'},
}
if ARGV[2] == '' then
  checks[#checks + 1] = {'INCR', KEYS[2]}
else
  checks[#checks + 1] = {'SET', KEYS[2], '1'}
  checks[#checks + 1] = {'TIME'}
end
local refused = {}
for _, c in ipairs(checks) do
  if not redis.acl_check_cmd(unpack(c)) then
    refused[#refused + 1] = c[1] .. (c[2] and (' ' .. c[2]) or '')
  end
end
return refused
