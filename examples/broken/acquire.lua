-- Seed 004's first lock, written as a lua: lock: SET NX PX, released by a plain DEL (deliberately broken)
-- weakness: a holder whose lease expired (a pause longer than the ttl) deletes the next holder's lock, and a third walks in beside it
-- wait: spin:0s
--
-- KEYS[1] the lock; ARGV[1] this lease's token, ARGV[2] the ttl in ms.
-- Returns 1 when granted, 0 when another holds the lock.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
