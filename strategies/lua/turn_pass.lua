-- Prepended to Redisson's scripts that announce a release (scriptWithTurn): announce(key,
-- msg, a) is their PUBLISH. Without ARGV[a] it publishes msg on key, Redisson's channel, and
-- returns 1. With ARGV[a] (the pubsub wait policy) key is the lock's list of waiting processes
-- and the turn passes round robin as in turn.lua: one process's channel, one waiter woken.
-- ARGV[a..a+3] are turn.lua's ARGV[1..4]: the caller's member, '1' when a local waiter may
-- take the turn, '1' when PUBLISH counts receivers, the list's ttl in ms.
-- Returns 1 when another process has the turn, 3 when the caller has it (it wakes a local
-- waiter), 4 when no process took it (a local waiter that came meanwhile is woken).
local function announce(key, msg, a)
  if not ARGV[a] then
    redis.call('publish', key, msg)
    return 1
  end
  local me, mine = ARGV[a], ARGV[a + 1] == '1'
  local first, turn
  while true do
    local m = redis.call('LMOVE', key, key, 'LEFT', 'RIGHT')
    if not m or m == first then
      break
    end
    first = first or m
    if m == me then
      if mine then
        turn = m
        break
      end
    elseif redis.call('PUBLISH', m, msg) > 0 or ARGV[a + 2] ~= '1' then
      turn = m
      break
    else
      redis.call('LREM', key, 0, m)
      if m == first then
        first = nil
      end
    end
  end
  if first then
    redis.call('PEXPIRE', key, ARGV[a + 3])
  end
  if turn == me or (not turn and mine) then
    return 3
  end
  if turn then
    return 1
  end
  return 4
end
