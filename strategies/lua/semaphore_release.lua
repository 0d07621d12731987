-- RSemaphore's release (RedissonSemaphore.releaseAsync): give ARGV[1] permits back, whoever
-- took them, and announce the count now free (announce, turn_pass.lua).
-- KEYS[1] the permit count, KEYS[2] redisson_sc:{name} or the waiting list; ARGV[1] permits,
-- ARGV[2..5] the turn. Returns announce's result.
local value = redis.call('incrby', KEYS[1], ARGV[1])
return announce(KEYS[2], value, 2)
