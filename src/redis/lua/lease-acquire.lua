-- Takes capacity leases on farm clusters, in groups that are granted whole or not at all.
-- KEYS: pairs of (cluster set, run set), one per lease. ARGV: ttl ms, then per group its lease
-- count n and n triples of (member, run member, capacity; -1: no limit). Returns 1 or 0 per group.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[1])
local granted = {}
local key = 1
local arg = 2
while arg <= #ARGV do
  local n = tonumber(ARGV[arg])
  local first_key, first_arg = key, arg + 1
  -- First every lease's room, counting the group's own new leases on the same cluster.
  local adding = {}
  local fits = true
  for j = 0, n - 1 do
    local k, a = first_key + j * 2, first_arg + j * 3
    redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', ms)
    local capacity = tonumber(ARGV[a + 2])
    if not redis.call('ZSCORE', KEYS[k], ARGV[a]) then
      adding[KEYS[k]] = (adding[KEYS[k]] or 0) + 1
      if capacity >= 0 and redis.call('ZCARD', KEYS[k]) + adding[KEYS[k]] > capacity then
        fits = false
      end
    end
  end
  if fits then
    for j = 0, n - 1 do
      local k, a = first_key + j * 2, first_arg + j * 3
      redis.call('ZADD', KEYS[k], ms + ttl, ARGV[a])
      redis.call('ZADD', KEYS[k + 1], ms + ttl, ARGV[a + 1])
      redis.call('PEXPIRE', KEYS[k], ttl * 2)
      redis.call('PEXPIRE', KEYS[k + 1], ttl * 2)
    end
  end
  granted[#granted + 1] = fits and 1 or 0
  key = first_key + n * 2
  arg = first_arg + n * 3
end
return granted
