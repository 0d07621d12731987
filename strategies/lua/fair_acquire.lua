-- Fair (FIFO) lock, acquire side. The lock is a plain string key holding the owner's token;
-- waiters queue in a list of "deadline_ms:token" entries. A release hands the lock straight to
-- the head of the queue (fair_release.lua), so a queued waiter never competes again: it only
-- learns, by its wake-up message or by polling, that the lock now holds its token.
-- KEYS[1] lock, KEYS[2] queue (same hash slot);
-- ARGV[1] token, ARGV[2] ttl in ms, ARGV[3] queue entry, ARGV[4] '1' when already queued,
-- ARGV[5] the queue's ttl in ms: reset by every enqueue and every poll, so that a queue whose
-- waiters are all gone (a killed process) expires.
-- Returns 1 when the caller holds the lock; when it waits (and is queued): 0 as it joins the
-- queue (its first sleep is the policy's patience), and on a later poll -1 - the holder's
-- remaining lease in ms, the longest a waiter need sleep with no hand-over message. The join
-- reads no PTTL: on a hot key every acquire joins once, and a hand-over, not the lease's
-- end, is what wakes nearly all of them (one command per acquire, measured in bench.sh's
-- hot-fair row: 9 commands per acquire with it out, 10 with it in).
if ARGV[4] == '1' then
  local holder = redis.call('GET', KEYS[1])
  if holder == ARGV[1] then
    return 1 -- handed over to us
  end
  if holder then
    redis.call('PEXPIRE', KEYS[2], ARGV[5])
    return -1 - math.max(redis.call('PTTL', KEYS[1]), 0)
  end
  -- Free while we are queued: a lease expired with nobody to hand it over (a crashed
  -- holder). Whoever polls first takes it.
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('LREM', KEYS[2], 1, ARGV[3])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 0
