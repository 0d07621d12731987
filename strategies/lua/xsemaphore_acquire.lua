-- RPermitExpirableSemaphore's acquire (RedissonPermitExpirableSemaphore.tryAcquireAsync):
-- first reclaim up to ARGV[1] permits whose lease ran out (announcing the count they free on
-- the channel), then take ARGV[1] permits when that many are free, each an id in a sorted set
-- scored by the epoch ms its lease ends. Expiry is judged by the callers' clocks.
-- KEYS[1] the permit count, KEYS[2] the leases ({name}:timeout), KEYS[3] redisson_sc:{name};
-- ARGV[1] permits, ARGV[2] the lease's end, ARGV[3] now (epoch ms), ARGV[4] the score of a
-- permit without a lease, ARGV[5..] the permit ids.
-- Returns 'OK' when taken; else ':' .. the end of the lease that ends first, when one will;
-- else nil.
local expiredIds = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, ARGV[1])
if #expiredIds > 0 then
  redis.call('zrem', KEYS[2], unpack(expiredIds))
  local value = redis.call('incrby', KEYS[1], #expiredIds)
  if tonumber(value) > 0 then
    redis.call('publish', KEYS[3], value)
  end
end
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  for i = 5, #ARGV, 1 do
    redis.call('zadd', KEYS[2], ARGV[2], ARGV[i])
  end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then
    redis.call('pexpire', KEYS[2], ttl)
  end
  return 'OK'
end
local v = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if v[1] ~= nil and v[2] ~= ARGV[4] then
  return ':' .. tostring(v[2])
end
return nil
