-- Joins the active gate of a request key if it still exists, else writes the new gate and claims
-- the key. KEYS: request key, gate hash. ARGV: gate id, active TTL, gate TTL, gate key prefix,
-- then the gate hash's field/value pairs. Returns the id of the gate that stands.
local existing = redis.call('GET', KEYS[1])
if existing and redis.call('EXISTS', ARGV[4] .. existing) == 1 then return existing end
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
