-- RReadWriteLock's read lock (RedissonReadLock.tryLockInnerAsync): a free lock, a lock in
-- read mode, or one the same owner holds for writing takes one more read hold. Each hold
-- gets a timeout key of its own, KEYS[2] .. ':' .. its number, with the lease as ttl; the
-- lock's ttl is the longest lease of its holds.
-- KEYS[1] lock, KEYS[2] the reader's timeout prefix ({name}:owner:rwlock_timeout);
-- ARGV[1] lease in ms, ARGV[2] the reader's field (its owner id), ARGV[3] its writer field.
-- Returns nil when acquired, else the lock's remaining lease in ms (PTTL).
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1)
  redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local key = KEYS[2] .. ':' .. ind
  redis.call('set', key, 1)
  redis.call('pexpire', key, ARGV[1])
  local remainTime = redis.call('pttl', KEYS[1])
  redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])
