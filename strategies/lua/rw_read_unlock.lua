-- RReadWriteLock's read unlock (RedissonReadLock.unlockInnerAsync, redisson-4.7.0): the
-- unlock latch first (see redisson_unlock.lua); drop one read hold and its timeout key. While
-- other holds remain, the lock's ttl becomes the longest of their timeout keys' (a writer's
-- hold keeps the lock as it is); otherwise the lock is deleted and announced with
-- UNLOCK_MESSAGE (announce, turn_pass.lua). A lock already gone is announced and, as in
-- Redisson, not ours (nil).
-- KEYS[1] lock, KEYS[2] the reader's timeout prefix, KEYS[3] the prefix of every reader's
-- timeout keys ({name}), KEYS[4] the unlock latch, KEYS[5] redisson_rwlock:{name} or the
-- waiting list; ARGV[1] the message, ARGV[2] the reader's field, ARGV[3] the latch's life in
-- ms, ARGV[4..7] the turn.
-- Returns nil when the reader holds nothing, 0 when nothing was announced, else announce's.
local val = redis.call('get', KEYS[4])
if val ~= false then
  return tonumber(val)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  announce(KEYS[5], ARGV[1], 4)
  redis.call('set', KEYS[4], 1, 'px', ARGV[3])
  return nil
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
    redis.call('set', KEYS[4], 0, 'px', ARGV[3])
    return 0
  end
  if mode == 'write' then
    redis.call('set', KEYS[4], 0, 'px', ARGV[3])
    return 0
  end
end
redis.call('del', KEYS[1])
local r = announce(KEYS[5], ARGV[1], 4)
redis.call('set', KEYS[4], 1, 'px', ARGV[3])
return r
