-- RPermitExpirableSemaphore's availablePermits: reclaim every permit whose lease ran out
-- (announcing the count), then return the free count; nil when it was never set.
-- KEYS[1] the permit count, KEYS[2] the leases, KEYS[3] redisson_sc:{name}; ARGV[1] now.
local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[1], 'limit', 0, -1)
if #expiredIds > 0 then
  redis.call('zrem', KEYS[2], unpack(expiredIds))
  local value = redis.call('incrby', KEYS[1], #expiredIds)
  if tonumber(value) > 0 then
    redis.call('publish', KEYS[3], value)
  end
  return value
end
return redis.call('get', KEYS[1])
