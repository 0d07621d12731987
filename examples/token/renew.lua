-- The watchdog's renewal: extend the lock only while it still holds our token.
-- KEYS[1] the lock; ARGV[1] this lease's token, ARGV[2] the ttl in ms.
-- Returns 1 when renewed, 0 when not the owner.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
