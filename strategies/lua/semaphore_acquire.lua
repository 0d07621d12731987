-- RSemaphore's acquire (RedissonSemaphore.tryAcquireAsync): take ARGV[1] permits when that
-- many are free. Nothing records who took them, and the count keeps no ttl.
-- KEYS[1] the permit count. Returns 1 when taken, 0 when too few are free or none were set.
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
