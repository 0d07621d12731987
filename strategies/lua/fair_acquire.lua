-- Fair (FIFO) lock, acquire side. The lock is a plain string key holding the owner's token;
-- waiters queue in a list of "deadline_ms:token" entries. A release hands the lock straight to
-- the head of the queue (fair_release.lua), so a queued waiter never competes again: it only
-- learns, by its wake-up message or by polling, that the lock now holds its token.
-- KEYS[1] lock, KEYS[2] queue (same hash slot);
-- ARGV[1] token, ARGV[2] ttl in ms, ARGV[3] queue entry, ARGV[4] '1' when already queued.
-- Returns 1 when the caller holds the lock, 0 when it waits (and is queued).
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[4] == '1' then
    redis.call('LREM', KEYS[2], 1, ARGV[3])
  end
  return 1
end
if ARGV[4] == '1' then
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    return 1
  end
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[3])
return 0
