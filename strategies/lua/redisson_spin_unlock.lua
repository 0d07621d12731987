-- RedissonSpinLock's release (RedissonSpinLock.unlockInnerAsync, redisson-4.7.0): RLock's
-- without the announcement, nobody listens. The unlock latch first (see redisson_unlock.lua),
-- then decrement the owner's count; while holds remain re-arm the lease, else delete the lock.
-- KEYS[1] lock, KEYS[2] the unlock latch (redisson_unlock_latch:{name}:requestId);
-- ARGV[1] lease in ms, ARGV[2] owner id, ARGV[3] the latch's life in ms.
-- Returns nil when the owner holds nothing, 0 when holds remain, 1 when the lock was freed.
local val = redis.call('get', KEYS[2])
if val ~= false then
  return tonumber(val)
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  redis.call('set', KEYS[2], 0, 'px', ARGV[3])
  return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[2], 1, 'px', ARGV[3])
return 1
