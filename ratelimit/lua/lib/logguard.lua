-- A log's guard, from the locals last and score (its newest member's name
-- and score, a number): base, the name without the guard, and guard, the
-- latest time the key has seen (a rejection after the newest admission
-- appends its time to the name: "<name>~<time>").
base, guard = last, score
local tilde = string.find(last, '~', 1, true)
if tilde then
  base, guard = string.sub(last, 1, tilde - 1), math.max(score, tonumber(string.sub(last, tilde + 1)))
end
