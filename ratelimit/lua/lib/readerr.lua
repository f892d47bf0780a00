-- e: the error of a decision's first read of a key, r (redis.pcall's error
-- table), made before anything was written. In a slot being migrated, a
-- key that expired after the server checked the call's keys and before the
-- script began is one this node no longer has, and the read fails ("non
-- local key"). Nothing is written yet, so the error is TRYAGAIN instead,
-- as the check would have answered had the key expired a moment sooner,
-- and the client sends the call again. Any other error is kept as it is.
local e = r.err
if string.find(e, 'non local key', 1, true) then
  e = 'TRYAGAIN a key of the call expired in a slot being migrated'
end
