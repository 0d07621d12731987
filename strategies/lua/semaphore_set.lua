-- RSemaphore's trySetPermits (RedissonSemaphore.trySetPermitsAsync, without its optional
-- timeToLive): set the permit count of a semaphore that has none yet, and announce it.
-- KEYS[1] the permit count, KEYS[2] the semaphore's channel (redisson_sc:{name});
-- ARGV[1] permits. Returns 1 when set, 0 when the semaphore had a count already.
local value = redis.call('get', KEYS[1])
if value == false then
  redis.call('set', KEYS[1], ARGV[1])
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
return 0
