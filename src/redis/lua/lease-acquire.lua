-- Takes capacity leases on farm clusters.
-- KEYS: pairs of (cluster set, run set). ARGV: ttl ms, then triples of (member, run member,
-- capacity; -1: no limit). Returns 1 or 0 per lease.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[1])
local granted = {}
for i = 1, #KEYS, 2 do
  local arg = (i - 1) / 2 * 3 + 2
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ms)
  local capacity = tonumber(ARGV[arg + 2])
  if capacity >= 0 and not redis.call('ZSCORE', KEYS[i], ARGV[arg]) and redis.call('ZCARD', KEYS[i]) >= capacity then
    granted[#granted + 1] = 0
  else
    redis.call('ZADD', KEYS[i], ms + ttl, ARGV[arg])
    redis.call('ZADD', KEYS[i + 1], ms + ttl, ARGV[arg + 1])
    redis.call('PEXPIRE', KEYS[i], ttl * 2)
    redis.call('PEXPIRE', KEYS[i + 1], ttl * 2)
    granted[#granted + 1] = 1
  end
end
return granted
