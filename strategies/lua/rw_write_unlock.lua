-- RReadWriteLock's write unlock (RedissonWriteLock.unlockInnerAsync, without the unlock
-- latch): a partial release re-arms the lease; the last deletes the lock and announces it
-- with READ_UNLOCK_MESSAGE (announce, turn_pass.lua), unless the writer also holds read locks,
-- which then keep the lock in read mode. A lock already gone counts as released and is
-- announced, as in Redisson.
-- KEYS[1] lock, KEYS[2] redisson_rwlock:{name} or the waiting list; ARGV[1] the message,
-- ARGV[2] lease in ms, ARGV[3] the writer's field, ARGV[4..7] the turn.
-- Returns nil when the writer holds nothing, 0 when nothing was announced, else announce's.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  return announce(KEYS[2], ARGV[1], 4)
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  return announce(KEYS[2], ARGV[1], 4)
end
redis.call('hset', KEYS[1], 'mode', 'read') -- its own read locks remain
return 0
