-- Redisson's fair lock acquire (RedissonFairLock.tryLockInnerAsync, the EVAL_LONG form): the
-- lock is RLock's hash; waiters queue by owner id in a list, each with a timeout (epoch ms)
-- in a sorted set, the one before it's plus the thread wait time.
-- KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] lease in ms, ARGV[2] owner id,
-- ARGV[3] thread wait time in ms, ARGV[4] now in epoch ms (the caller's clock).
-- Returns nil when acquired or re-entered, else about how long to wait, in ms.
-- Stale waiters first: heads whose timeout passed leave the queue (no other timeout moves).
while true do
  local first = redis.call('lindex', KEYS[2], 0)
  if first == false then
    break
  end
  local timeout = tonumber(redis.call('zscore', KEYS[3], first))
  if timeout <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], first)
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
-- Already queued: approximately our wait (Redisson's own shortcut).
local timeout = redis.call('zscore', KEYS[3], ARGV[2])
if timeout ~= false then
  return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4])
end
-- Queue at the tail, timing out a thread wait time after the one before us (or the lock).
local lastThreadId = redis.call('lindex', KEYS[2], -1)
local ttl
if lastThreadId ~= false and lastThreadId ~= ARGV[2] then
  ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
