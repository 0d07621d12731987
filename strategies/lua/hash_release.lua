-- Release one hold of the reentrant hash lock (seed 001): decrement the owner's count and
-- delete the lock when it reaches 0. Like the seed, a partial release does not extend the ttl.
-- KEYS[1] lock; ARGV[1] owner id.
-- Returns nil when the owner holds nothing, 0 when holds remain, 1 when the lock was deleted.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if counter > 0 then
  return 0
end
redis.call('del', KEYS[1])
return 1
