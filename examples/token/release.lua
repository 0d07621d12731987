-- Compare-and-delete in one script: a GET and a DEL sent apart would let the lease expire
-- between them and the DEL destroy the next holder's lock.
-- KEYS[1] the lock; ARGV[1] this lease's token. Returns 1 when released, 0 when not the owner.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
