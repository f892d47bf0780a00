#!lua flags=allow-cross-slot-keys
-- batch.lua: many decisions in one call, each made by the very code of its
-- own script: a single limit's by its algorithm's (lib/gcra.lua,
-- lib/counter.lua, lib/log.lua, as a function of its state), a Policy's
-- by policy.lua's (lib/policy.lua). TestBatchScriptDecidesAsThePerDecisionScripts
-- holds the two ways to the same answers, reply by reply.
--
-- KEYS[1]  any key of the batch: it only routes the call to its node on a
--          Cluster. Every key is passed again in ARGV, where the Cluster
--          does not check that they share a slot (allow-cross-slot-keys:
--          the node must own them, and refuses a key it does not).
-- ARGV     the decisions, in the order they are made: for each, its head,
--          then its m keys. The head packs the decision's own ARGV
--          (wire.go; batchcall.go's headOf): m, its number of limits (1
--          byte), the mode's first letter ('a' allow, 't' take), n and the
--          pinned time ('>i8' each, -1: the server's), then the m packed
--          limits (25 bytes each, the letter first).
-- Reply:   the number of decisions made (8 bytes, big-endian), then the
--          reply of each (wire.go's, 8·(2+4m) bytes), then, if not all
--          were made, the error that stopped the one after them.
--
-- Why this order, reads of every key first, then the decisions one by one:
-- a Cluster node refuses a command on a key it does not own, or a missing
-- key of a slot it is migrating, at that command, and Redis does not undo
-- what the script wrote before. So every key is read before anything is
-- written: such an error ends the call before any write, and Go sends the
-- decisions again one by one. After those reads no command can meet that
-- refusal, as long as no key goes missing: the slot's owner cannot change
-- during a script, a key cannot expire in it (the time is frozen), and no
-- write deletes a key (the log adds its new members before it trims the
-- old ones). A key's first decision takes the state those reads found; a
-- later one reads the key again, after what the decisions before it wrote.
-- An error after the first write (a command refused on its own: an ACL that
-- lets a key be read but not written) stops at the decision it hit: the
-- ones before it are made and replied, and that one's error is reported as
-- its own, as its own script would have reported it, part-way through its
-- writes too; the ones after it are not made, and Go sends them alone.
--
-- One TIME for the whole call, read on the first decision that has no
-- pinned time: the decisions of a batch are made at one instant. Each
-- decision's own monotonic guard still applies.
--
-- A function per algorithm, built once a call, not once a decision: the
-- cost of building it is shared by the batch.

local function gcra(key, v, n, mode, now, cap, unit, drain)
  --#include lib/gcra.lua
end

local function counter(key, v, n, mode, now, cap, win)
  --#include lib/counter.lua
end

local function log(key, newest, n, mode, now, cap, win)
  --#include lib/log.lua
end

-- Read: every key of every decision, before any write. st[key] is the
-- state read (false: none), until a decision takes it with read, which
-- reads a key taken before again (after the writes of the decisions before).
local st, total, size = {}, 0, #ARGV
local function read(command, key, ...)
  local v = st[key]
  if v == nil then
    return redis.call(command, key, ...)
  end
  st[key] = nil
  return v
end

local function policy(KEYS, ARGV)
  --#include lib/policy.lua
end

do
  local j = 1
  while j <= size do
    local head = ARGV[j]
    local m = string.byte(head)
    for i = 1, m do
      local key = ARGV[j + i]
      if st[key] == nil then
        if string.byte(head, i * 25 - 6) == 108 then -- 'l', a log
          st[key] = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
        else
          st[key] = redis.call('GET', key)
        end
      end
    end
    j, total = j + 1 + m, total + 1
  end
end

-- Decide, in order; an error stops at the decision it hit (see the top).
local replies, made, clock = {}, 0, false
local ok, err = pcall(function()
  local j = 1
  while made < total do
    local head = ARGV[j]
    local m, md, n, now = struct.unpack('>Bc1i8i8', head)
    local mode = 'allow'
    if md == 't' then
      mode = 'take'
    end
    if now < 0 then
      if not clock then
        local t = redis.call('TIME')
        clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
      end
      now = clock
    end
    local rep
    if m == 1 then
      local key = ARGV[j + 1]
      local alg, cap, a, b = struct.unpack('>c1I8I8I8', head, 19)
      if alg == 'g' then
        rep = gcra(key, read('GET', key), n, mode, now, cap, a, b)
      elseif alg == 'c' then
        rep = counter(key, read('GET', key), n, mode, now, cap, a)
      else
        rep = log(key, read('ZRANGE', key, '-1', '-1', 'WITHSCORES'), n, mode, now, cap, a)
      end
    else
      local keys, args = {}, { n, mode, now }
      for i = 1, m do
        keys[i], args[3 + i] = ARGV[j + i], string.sub(head, i * 25 - 6, i * 25 + 18)
      end
      rep = policy(keys, args)
      if type(rep) == 'table' then
        error(rep)
      end
    end
    made = made + 1
    replies[made] = rep
    j = j + 1 + m
  end
end)
local head = struct.pack('>i8', made)
if ok then
  return head .. table.concat(replies)
end
if type(err) == 'table' then
  err = err.err
end
return head .. table.concat(replies) .. tostring(err)
