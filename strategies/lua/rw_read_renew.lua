-- Watchdog renewal of a read lock (RedissonReadLock.renewExpirationAsync): while the reader
-- holds it, extend the lock and the timeout keys of every hold of every reader.
-- KEYS[1] lock, KEYS[2] the prefix of every reader's timeout keys ({name}); ARGV[1] lease in
-- ms, ARGV[2] the reader's field. Returns 1 when extended, 0 when not held.
local counter = redis.call('hget', KEYS[1], ARGV[2])
if counter ~= false then
  redis.call('pexpire', KEYS[1], ARGV[1])
  if redis.call('hlen', KEYS[1]) > 1 then
    local keys = redis.call('hkeys', KEYS[1])
    for n, key in ipairs(keys) do
      counter = tonumber(redis.call('hget', KEYS[1], key))
      if type(counter) == 'number' then
        for i = counter, 1, -1 do
          redis.call('pexpire', KEYS[2] .. ':' .. key .. ':rwlock_timeout:' .. i, ARGV[1])
        end
      end
    end
  end
  return 1
end
return 0
