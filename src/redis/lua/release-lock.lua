-- Releases a lock only if this holder still has it. KEYS: the lock. ARGV: the holder's token.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
