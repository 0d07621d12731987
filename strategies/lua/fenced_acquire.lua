-- token lock plus a fencing token: SET NX PX, and on success INCR a per-lock counter that
-- never expires, so every lease of this lock gets a strictly larger number.
-- KEYS[1] lock, KEYS[2] fence counter (same hash slot); ARGV[1] token, ARGV[2] ttl in ms.
-- Returns the fencing token (>= 1) when acquired, 0 when the lock is taken.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
