-- decide(keys, argv, ls, n, mode, now) decides and charges a call of n in
-- mode on the rule whose limits ls are (lib/reservations.lua's: keys[i]
-- and argv[3 + i] are limit i's) exactly as the rule's own script does: a single limit by
-- its algorithm's part, as log.lua, counter.lua and gcra.lua do (and
-- batch.lua), a Policy by lib/policy.lua, as policy.lua does. It returns
-- the reply, packed, and when it admits, the time it decided at and the
-- names the log's first new members took: the name itself for a single
-- limit, limit i's as the third value's [i].first for a Policy. (The
-- single limit's part instead of the Policy's cost Reserve+Commit 54,000
-- server instructions less for one GCRA limit.)
-- A read it cannot make (TRYAGAIN in a slot being migrated) it raises as
-- an error, where a decision's own script answers an error reply: that
-- script has written nothing then, but a reservation script may have
-- (expired reservations released, a settlement's give-back), and the
-- client does not send an error raised so again.
--#include lib/read.lua

local function decide(keys, argv, ls, n, mode, now)
  local m = #ls
  if m > 1 then
    -- Built here, the closure is paid for by a Policy's call only.
    local function policy(KEYS, ARGV)
      --#include lib/policy.lua
    end
    local lkeys, largs = {}, { n, mode, now }
    for i = 1, m do
      lkeys[i], largs[3 + i] = keys[i], argv[3 + i]
    end
    local rep, at, named = policy(lkeys, largs)
    if type(rep) == 'table' then
      error(rep.err)
    end
    return rep, at, named
  end
  local key, L = keys[1], ls[1]
  local cap = L.cap
  if L.alg == 'l' then
    local win = L.a
    local newest, err = read('ZRANGE', key, '-1', '-1', 'WITHSCORES')
    if err then
      error(err)
    end
    --#include lib/log.lua
  end
  local v, err = read('GET', key)
  if err then
    error(err)
  end
  if L.alg == 'c' then
    local win = L.a
    --#include lib/counter.lua
  end
  local unit, drain = L.a, L.b
  --#include lib/gcra.lua
end
