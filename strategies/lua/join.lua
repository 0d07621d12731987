-- A process starts waiting for a lock: its member (its wake-up channel) goes to the tail of
-- the lock's list of waiting processes (turn.lua), at most once, and the list's ttl is reset.
-- KEYS[1] list; ARGV[1] member, ARGV[2] ttl in ms.
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
