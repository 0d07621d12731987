-- RLock.expireAsync (RedissonExpirable.expireAsync, redisson-4.7.0), as RedissonMultiLock's
-- checkLeaseTime runs it on each key of a set it completed: set the lease of every key to
-- ARGV[1] ms (ARGV[2]: PEXPIRE's NX/XX/GT/LT, '' for none).
-- Returns 1 when any key's lease was set, else 0.
local result = 0
for j = 1, #KEYS, 1 do
  local expireSet
  if ARGV[2] ~= '' then
    expireSet = redis.call('pexpire', KEYS[j], ARGV[1], ARGV[2])
  else
    expireSet = redis.call('pexpire', KEYS[j], ARGV[1])
  end
  if expireSet == 1 then
    result = expireSet
  end
end
return result
