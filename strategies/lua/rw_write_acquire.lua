-- RReadWriteLock's write lock (RedissonWriteLock.tryLockInnerAsync): the lock is a hash whose
-- field 'mode' is 'read' or 'write' and whose other fields count holds; a writer's field is
-- its owner id + ':write'. A free lock, or the writer's own re-entry, takes it; a re-entry
-- adds a lease to what remains.
-- KEYS[1] lock; ARGV[1] lease in ms, ARGV[2] the writer's field.
-- Returns nil when acquired or re-entered, else the lock's remaining lease in ms (PTTL).
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' then
  if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local currentExpire = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], currentExpire + ARGV[1])
    return nil
  end
end
return redis.call('pttl', KEYS[1])
