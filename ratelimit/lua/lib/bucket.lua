-- windowStart's other half: the local e, the time elapsed in the
-- window-long bucket now falls in (now mod win), exact: the float quotient
-- may round. The bucket starts at now - e.
local e = now - math.floor(now / win) * win
if e < 0 then
  e = e + win
elseif e >= win then
  e = e - win
end
