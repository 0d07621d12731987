-- RReadWriteLock's write unlock (RedissonWriteLock.unlockInnerAsync, redisson-4.7.0): the
-- unlock latch first (see redisson_unlock.lua); a partial release re-arms the lease; the last
-- deletes the lock and announces it with READ_UNLOCK_MESSAGE (announce, turn_pass.lua),
-- unless the writer also holds read locks, which then keep the lock in read mode. A lock
-- already gone is announced and, as in Redisson, not ours (nil).
-- KEYS[1] lock, KEYS[2] the unlock latch, KEYS[3] redisson_rwlock:{name} or the waiting
-- list; ARGV[1] the message, ARGV[2] lease in ms, ARGV[3] the writer's field, ARGV[4] the
-- latch's life in ms, ARGV[5..8] the turn.
-- Returns nil when the writer holds nothing, 0 when nothing was announced, else announce's.
local val = redis.call('get', KEYS[2])
if val ~= false then
  return tonumber(val)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  announce(KEYS[3], ARGV[1], 5)
  redis.call('set', KEYS[2], 1, 'px', ARGV[4])
  return nil
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[2], 0, 'px', ARGV[4])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
local r = 0
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  r = announce(KEYS[3], ARGV[1], 5)
else
  redis.call('hset', KEYS[1], 'mode', 'read') -- its own read locks remain
end
redis.call('set', KEYS[2], 1, 'px', ARGV[4])
return r
