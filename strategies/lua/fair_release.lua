-- Fair lock, release side, also used by a waiter that gives up. Optionally removes the
-- caller's own queue entry first; then, if the caller holds the lock, hands it to the first
-- queued waiter whose deadline has not passed (setting the lock to that waiter's token and
-- publishing the token so exactly that waiter wakes), or deletes it when nobody waits.
-- KEYS[1] lock, KEYS[2] queue; ARGV[1] token, ARGV[2] ttl in ms, ARGV[3] now in ms,
-- ARGV[4] channel ('' = waiters poll), ARGV[5] own queue entry to remove ('' = none).
-- Returns 0 when the caller did not hold the lock, 1 when deleted, 2 when handed over.
if ARGV[5] ~= '' then
  redis.call('LREM', KEYS[2], 1, ARGV[5])
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local now = tonumber(ARGV[3])
while true do
  local entry = redis.call('LPOP', KEYS[2])
  if not entry then
    redis.call('DEL', KEYS[1])
    return 1
  end
  local sep = string.find(entry, ':', 1, true)
  local deadline = tonumber(string.sub(entry, 1, sep - 1))
  if deadline == 0 or deadline >= now then
    local next = string.sub(entry, sep + 1)
    redis.call('SET', KEYS[1], next, 'PX', ARGV[2])
    if ARGV[4] ~= '' then
      redis.call('PUBLISH', ARGV[4], next)
    end
    return 2
  end
end
