-- unlock.lua, then announce the release to waiters of the pubsub wait policy; the payload
-- names the releasing process, whose own waiters were woken locally already.
-- KEYS[1] lock; ARGV[1] token, ARGV[2] channel, ARGV[3] payload.
-- Returns 1 when deleted, 0 when not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  return 1
end
return 0
