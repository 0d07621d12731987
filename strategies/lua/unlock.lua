-- Compare-and-delete (seeds 003, 004): delete the lock only while it still holds our token.
-- GET and DEL must be one script: between a separate GET and DEL the lease can expire and
-- another client take the lock, which the DEL would then destroy.
-- KEYS[1] lock; ARGV[1] token. Returns 1 when deleted, 0 when the lock was not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
