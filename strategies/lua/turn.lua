-- The pubsub wait policy's turn across processes. KEYS[1] lists the processes that wait for
-- the lock: each member is one process's wake-up channel for it, present while that process
-- has waiters here (or lingers subscribed). The turn goes round robin, LMOVE taking the head
-- to the tail: the process whose turn it is gets a PUBLISH on its channel and wakes one local
-- waiter. A member that nobody listens to any more (a process gone) is dropped on the way.
-- With KEYS[2], the lock, a release runs in the same script: when the lock holds ARGV[5]
-- (compare-and-delete; '' = delete blindly) it is deleted, or, when the turn is the caller's
-- own and ARGV[6] is a token, handed straight to the caller's next local waiter (SET, no
-- message). Without KEYS[2] the script only passes a turn on (a process that cannot use it).
-- ARGV[1] the caller's own member; ARGV[2] '1' when a local waiter of the caller may take the
-- turn (else the caller's own entry is skipped); ARGV[3] '1' when PUBLISH counts receivers
-- (not in a Redis Cluster, where it counts the node's own); ARGV[4] ttl in ms, of the list
-- and of a handed-over lock; ARGV[7] '1' when the caller's turn lasts (its local streak is
-- below turnStreak): the lock goes to ARGV[6] at once and the turn stays where it is.
-- Returns 0 when the lock did not hold ARGV[5], 1 when released and another process has the
-- turn, 2 when handed to ARGV[6], 3 when released and the turn is the caller's: it wakes a
-- local waiter; 4 when released and no process took the turn: a waiter of the caller's that
-- registered while this ran (after the caller looked) is woken all the same.
local lock = KEYS[2]
if lock and ARGV[5] ~= '' and redis.call('GET', lock) ~= ARGV[5] then
  return 0
end
if lock and ARGV[7] == '1' and ARGV[6] ~= '' then
  redis.call('SET', lock, ARGV[6], 'PX', ARGV[4])
  return 2
end
local me, mine = ARGV[1], ARGV[2] == '1'
local first, turn
while true do
  local m = redis.call('LMOVE', KEYS[1], KEYS[1], 'LEFT', 'RIGHT')
  if not m or m == first then
    break -- nobody, or round the whole list
  end
  first = first or m
  if m == me then
    if mine then
      turn = m
      break
    end
  elseif redis.call('PUBLISH', m, 't') > 0 or ARGV[3] ~= '1' then
    turn = m
    break
  else
    redis.call('LREM', KEYS[1], 0, m)
    if m == first then
      first = nil
    end
  end
end
if first then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
local ours = turn == me or (not turn and mine)
if lock then
  if ours and ARGV[6] ~= '' then
    redis.call('SET', lock, ARGV[6], 'PX', ARGV[4])
    return 2
  end
  redis.call('DEL', lock)
end
if ours then
  return 3
end
if turn then
  return 1
end
return 4
