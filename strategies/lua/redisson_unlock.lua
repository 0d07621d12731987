-- Redisson's RLock release (RedissonLock.unlockInnerAsync; RedissonSpinLock's without the
-- message): decrement the owner's count; while holds remain, re-arm the lease (PEXPIRE), else
-- delete the lock and announce it.
-- KEYS[1] lock; KEYS[2], when given, where the freed lock is announced: the lock's own channel
-- (redisson_lock__channel:{name}), PUBLISH ARGV[1] as Redisson does; or, with ARGV[4], the
-- list of processes waiting for the lock, whose turn passes round robin as in turn.lua (the
-- pubsub wait policy: one process's channel, one waiter woken, fair across processes).
-- ARGV[1] unlock message, ARGV[2] lease in ms, ARGV[3] owner id; with the list: ARGV[4] the
-- caller's member, ARGV[5] '1' when a local waiter may take the turn, ARGV[6] '1' when PUBLISH
-- counts receivers, ARGV[7] the list's ttl in ms (turn.lua's ARGV[1..4]).
-- Returns nil when the owner holds nothing, 0 when holds remain, 1 when the lock was freed
-- (and the turn, if any, is another process's), 3 when freed and the turn is the caller's.
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
if not KEYS[2] then
  return 1
end
if not ARGV[4] then
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
local me, mine = ARGV[4], ARGV[5] == '1'
local first, turn
while true do
  local m = redis.call('LMOVE', KEYS[2], KEYS[2], 'LEFT', 'RIGHT')
  if not m or m == first then
    break
  end
  first = first or m
  if m == me then
    if mine then
      turn = m
      break
    end
  elseif redis.call('PUBLISH', m, ARGV[1]) > 0 or ARGV[6] ~= '1' then
    turn = m
    break
  else
    redis.call('LREM', KEYS[2], 0, m)
    if m == first then
      first = nil
    end
  end
end
if first then
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
if turn == me or (not turn and mine) then
  return 3
end
return 1
