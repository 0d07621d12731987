-- RReadWriteLock's read unlock (RedissonReadLock.unlockInnerAsync, without the unlock
-- latch): drop one read hold and its timeout key. While other holds remain, the lock's ttl
-- becomes the longest of their timeout keys' (a writer's hold keeps the lock as it is);
-- otherwise the lock is deleted and announced with UNLOCK_MESSAGE (announce,
-- turn_pass.lua). A lock already gone counts as released and is announced, as in Redisson.
-- KEYS[1] lock, KEYS[2] the reader's timeout prefix, KEYS[3] the prefix of every reader's
-- timeout keys ({name}), KEYS[4] redisson_rwlock:{name} or the waiting list; ARGV[1] the
-- message, ARGV[2] the reader's field, ARGV[3..6] the turn.
-- Returns nil when the reader holds nothing, 0 when nothing was announced, else announce's.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  return announce(KEYS[4], ARGV[1], 3)
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if counter == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[2] .. ':' .. (counter + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local maxRemainTime = -3
  local keys = redis.call('hkeys', KEYS[1])
  for n, key in ipairs(keys) do
    counter = tonumber(redis.call('hget', KEYS[1], key))
    if type(counter) == 'number' then
      for i = counter, 1, -1 do
        local remainTime = redis.call('pttl', KEYS[3] .. ':' .. key .. ':rwlock_timeout:' .. i)
        maxRemainTime = math.max(remainTime, maxRemainTime)
      end
    end
  end
  if maxRemainTime > 0 then
    redis.call('pexpire', KEYS[1], maxRemainTime)
    return 0
  end
  if mode == 'write' then
    return 0
  end
end
redis.call('del', KEYS[1])
return announce(KEYS[4], ARGV[1], 3)
