-- Redisson's fair lock release (RedissonFairLock.unlockInnerAsync, redisson-4.7.0): the unlock
-- latch (see redisson_unlock.lua), prune stale waiters, then RLock's release; a freed lock is
-- announced to the queue's head only, on its own channel (KEYS[4] .. ':' .. owner id).
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] the lock's channel, KEYS[5] the
-- unlock latch; ARGV[1] unlock message, ARGV[2] lease in ms, ARGV[3] owner id, ARGV[4] now in
-- epoch ms, ARGV[5] the publish command, ARGV[6] the latch's life in ms.
-- Returns nil when the owner holds nothing, 0 when holds remain, 1 when freed (or already
-- gone, which Redisson counts as released).
local val = redis.call('get', KEYS[5])
if val ~= false then
  return tonumber(val)
end
while true do
  local firstThreadId2 = redis.call('lindex', KEYS[2], 0)
  if firstThreadId2 == false then
    break
  end
  local timeout = redis.call('zscore', KEYS[3], firstThreadId2)
  if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], firstThreadId2)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
if redis.call('exists', KEYS[1]) == 0 then
  local nextThreadId = redis.call('lindex', KEYS[2], 0)
  if nextThreadId ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1])
  end
  redis.call('set', KEYS[5], 1, 'px', ARGV[6])
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[5], 0, 'px', ARGV[6])
  return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
local nextThreadId = redis.call('lindex', KEYS[2], 0)
if nextThreadId ~= false then
  redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1])
end
return 1
