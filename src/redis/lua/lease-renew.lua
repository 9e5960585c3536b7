-- KEYS: pairs of (cluster set, run set). ARGV: ttl ms, then pairs of (member, run member).
-- Renewal re-adds a missing lease: after Redis lost its data, running shards count again.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expiry = ms + tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  redis.call('ZADD', KEYS[i], expiry, ARGV[i + 1])
  redis.call('ZADD', KEYS[i + 1], expiry, ARGV[i + 2])
  redis.call('PEXPIRE', KEYS[i], ARGV[1] * 2)
  redis.call('PEXPIRE', KEYS[i + 1], ARGV[1] * 2)
end
return 1
