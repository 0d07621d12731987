-- RPermitExpirableSemaphore's release of one permit (tryReleaseAsync): a permit id still in
-- the sorted set goes back to the count, which is announced (announce, turn_pass.lua).
-- KEYS[1] the permit count, KEYS[2] the leases, KEYS[3] redisson_sc:{name} or the waiting
-- list; ARGV[1] the permit id, ARGV[2] now (epoch ms), ARGV[3..6] the turn.
-- Returns {0} when the id was gone (reclaimed by an acquire after its lease ran out), else
-- {1 or, when its lease had run out though nobody had reclaimed it, 2; announce's result}.
local expire = redis.call('zscore', KEYS[2], ARGV[1])
local removed = redis.call('zrem', KEYS[2], ARGV[1])
if tonumber(removed) ~= 1 then
  return {0}
end
local value = redis.call('incrby', KEYS[1], 1)
local turn = announce(KEYS[3], value, 3)
if tonumber(expire) <= tonumber(ARGV[2]) then
  return {2, turn}
end
return {1, turn}
