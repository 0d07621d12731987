-- Watchdog renewal of the reentrant hash lock (Redisson's renewExpiration): extend the lock
-- while the owner still has a hold in it.
-- KEYS[1] lock; ARGV[1] owner id, ARGV[2] ttl in ms. Returns 1 when extended, 0 when not ours.
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
