-- The bug, on purpose: DEL without checking that the lock still holds our token. After our
-- lease ran out and someone else took the lock, this deletes their lock, and it always
-- answers "released". Compare ../token/release.lua.
redis.call('DEL', KEYS[1])
return 1
