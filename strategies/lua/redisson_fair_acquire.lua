-- Redisson's fair lock acquire (RedissonFairLock.tryLockInnerAsync, the EVAL_LONG form,
-- redisson-4.7.0): the lock is RLock's hash; waiters queue by owner id in a list, each with a
-- timeout (epoch ms) in a sorted set, the one before it's plus the thread wait time.
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] lease in ms, ARGV[2] owner id,
-- ARGV[3] thread wait time in ms (tryLock's waitTime; lock()'s fairLockWaitTimeout),
-- ARGV[4] now in epoch ms (the caller's clock).
-- Returns nil when acquired or re-entered, else how long to wait at most, in ms: the lock's
-- remaining lease (never below 0) for a waiter already queued (since 3.32.0), the lease or
-- the time until the waiter before it times out for one that joins the queue.
-- Stale waiters first: heads whose timeout passed leave the queue (no other timeout moves).
while true do
  local firstThreadId2 = redis.call('lindex', KEYS[2], 0)
  if firstThreadId2 == false then
    break
  end
  local timeout = redis.call('zscore', KEYS[3], firstThreadId2)
  if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], firstThreadId2)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
-- Free, and nobody queued or we are the head: take it; everyone behind waits a turn less.
if (redis.call('exists', KEYS[1]) == 0)
    and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  local keys = redis.call('zrange', KEYS[3], 0, -1)
  for i = 1, #keys, 1 do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i])
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
-- Already queued: the lock's remaining lease (3.32.0 replaced the approximation
-- timeout - wait - now, which ran negative).
local timeout = redis.call('zscore', KEYS[3], ARGV[2])
if timeout ~= false then
  local ttl = redis.call('pttl', KEYS[1])
  return math.max(0, ttl)
end
-- Queue at the tail, timing out a thread wait time after the one before us (or the lock).
local lastThreadId = redis.call('lindex', KEYS[2], -1)
local ttl
if lastThreadId ~= false and lastThreadId ~= ARGV[2] and redis.call('zscore', KEYS[3], lastThreadId) ~= false then
  ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
