-- The seeds' token lock (seeds 003, 004): SET key token NX PX ttl; compare-and-delete unlock, compare-and-extend renewal
-- safe-unlock: yes
-- wait: spin:0s
-- weakness: without a watchdog (--watchdog auto runs renew.lua), a hold longer than the ttl (a GC pause) lets a second holder in
--
-- Its callers retry at once (the wait line above), as the seeds' loop and the built-in token do.
-- KEYS[1] the lock; ARGV[1] this lease's token, ARGV[2] the ttl in ms.
-- Returns 1 when granted, 0 when another holds the lock. (It could return -PTTL instead of 0,
-- for a pubsub waiter's sleep, at one more command per failed attempt; the built-in token
-- lock does not read it either.)
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
