-- A waiter of Redisson's fair lock gives up (RedissonFairLock.acquireFailedAsync, redisson-4.7.0): everyone
-- queued behind it waits a thread wait time less, and it leaves the queue and timeouts.
-- KEYS[1] queue, KEYS[2] timeouts; ARGV[1] owner id, ARGV[2] thread wait time in ms.
local queue = redis.call('lrange', KEYS[1], 0, -1)
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do
  i = i + 1
end
i = i + 1
while i <= #queue do
  redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[i])
  i = i + 1
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
return 1
