-- Redisson's RLock acquire (RedissonLock.tryLockInnerAsync, redisson-4.7.0, unchanged since 2024):
-- the lock is a hash whose field ownerId (Redisson's clientUUID:threadId) counts that owner's
-- holds. A free lock or the owner's own re-entry increments the count and re-arms the lease.
-- KEYS[1] lock; ARGV[1] lease in ms, ARGV[2] owner id.
-- Returns nil when acquired or re-entered, else the holder's remaining lease in ms (PTTL),
-- which a waiter sleeps at most before trying again.
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])
