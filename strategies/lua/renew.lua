-- Watchdog renewal of a string lock: extend it only while it still holds our token.
-- KEYS[1] lock; ARGV[1] token, ARGV[2] ttl in ms. Returns 1 when extended, 0 when not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
