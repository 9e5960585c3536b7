-- KEYS: the cluster sets, then the run sets; ARGV: how many cluster sets. Returns live counts per
-- cluster and each run's members.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local clusters = tonumber(ARGV[1])
local counts = {}
local runs = {}
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ms)
  if i <= clusters then counts[i] = redis.call('ZCARD', key) else runs[i - clusters] = redis.call('ZRANGE', key, 0, -1) end
end
return { counts, runs }
