-- RedissonSpinLock's acquire (RedissonSpinLock.tryLockInnerAsync, redisson-4.7.0): RLock's
-- hash, with the free lock and the owner's re-entry as two branches.
-- KEYS[1] lock; ARGV[1] lease in ms, ARGV[2] owner id.
-- Returns nil when acquired or re-entered, else the holder's remaining lease in ms (PTTL).
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
