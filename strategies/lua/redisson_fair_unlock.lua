-- Redisson's fair lock release (RedissonFairLock.unlockInnerAsync, without the unlock latch):
-- prune stale waiters, then RLock's release; a freed lock is announced to the queue's head
-- only, on its own channel (KEYS[4] .. ':' .. owner id).
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] the lock's channel; ARGV[1] unlock
-- message, ARGV[2] lease in ms, ARGV[3] owner id, ARGV[4] now in epoch ms.
-- Returns nil when the owner holds nothing, 0 when holds remain, 1 when freed (or already
-- gone, which Redisson counts as released).
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  local timeout = tonumber(redis.call('zscore', KEYS[3], first))
  if timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], first)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
if redis.call('exists', KEYS[1]) == 0 then
  local nextThreadId = redis.call('lindex', KEYS[2], 0)
  if nextThreadId ~= false then
    redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1])
  end
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
local nextThreadId = redis.call('lindex', KEYS[2], 0)
if nextThreadId ~= false then
  redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1])
end
return 1
