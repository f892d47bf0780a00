#!lua flags=no-writes
-- Which of the commands semaphore runs the calling user may not run on this
-- semaphore's keys and channel (redis.acl_check_cmd, Redis 7.0+). Writes nothing.
-- KEYS[1] the permits   KEYS[2] the holders   KEYS[3] the counter
-- KEYS[4] the waiter mark   ARGV[1] the release channel
-- Returns the names of the refused commands (empty when all are allowed).
local checks = {
  {'TIME'}, {'ZRANGE', KEYS[1], '0', '1'}, {'ZREM', KEYS[1], 'x'}, {'ZSCORE', KEYS[1], 'x'},
  {'ZCOUNT', KEYS[1], '0', '1'}, {'ZADD', KEYS[1], '1', 'x'}, {'PEXPIRE', KEYS[1], '1'},
  {'HDEL', KEYS[2], 'x'}, {'HMGET', KEYS[2], 'x'}, {'HSET', KEYS[2], 'x', 'v'},
  {'GET', KEYS[3]}, {'SET', KEYS[3], '1'}, {'DEL', KEYS[4]},
  {'PUBLISH', ARGV[1], ''}, {'SUBSCRIBE', ARGV[1]},
  {'EVALSHA', 'x', '0'}, {'EVALSHA_RO', 'x', '0'}, {'EVAL', 'x', '0'}, {'EVAL_RO', 'x', '0'},
}
-- Each refusal is named by its command and first argument.
local refused = {}
for i = 1, #checks do
  local c = checks[i]
  if not redis.acl_check_cmd(unpack(c)) then table.insert(refused, table.concat(c, ' ', 1, math.min(#c, 2))) end
end
return refused
