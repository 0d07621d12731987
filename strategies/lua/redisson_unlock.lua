-- Redisson's RLock release (RedissonLock.unlockInnerAsync, redisson-4.7.0): the unlock latch
-- first (a retried unlock whose first run got through returns what that run returned), then
-- decrement the owner's count; while holds remain, re-arm the lease (PEXPIRE), else delete the
-- lock and announce it. Either way the latch records the result for ARGV[5] ms; the caller
-- DELs it once the reply is in (RedissonBaseLock.unlockInnerAsync).
-- KEYS[1] lock; KEYS[2] where the freed lock is announced: the lock's own channel
-- (redisson_lock__channel:{name}), ARGV[4] ('publish') ARGV[1] as Redisson does; or, with
-- ARGV[6], the list of processes waiting for the lock, whose turn passes round robin
-- (announce, turn_pass.lua: the pubsub wait policy); KEYS[3] the unlock latch
-- (redisson_unlock_latch:{name}:requestId).
-- ARGV[1] unlock message, ARGV[2] lease in ms, ARGV[3] owner id, ARGV[4] the publish command,
-- ARGV[5] the latch's life in ms; with the list: ARGV[6..9] the turn (turn.lua's ARGV[1..4]).
-- Returns nil when the owner holds nothing, 0 when holds remain, else announce's: 1 when the
-- lock was freed (and the turn, if any, is another process's), 3 or 4 as announce says.
local val = redis.call('get', KEYS[3])
if val ~= false then
  return tonumber(val)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if counter > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[5])
  return 0
end
redis.call('del', KEYS[1])
local r
if ARGV[6] then
  r = announce(KEYS[2], ARGV[1], 6)
else
  redis.call(ARGV[4], KEYS[2], ARGV[1])
  r = 1
end
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return r
