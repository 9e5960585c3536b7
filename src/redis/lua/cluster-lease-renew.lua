-- Renews cluster leases that are still held; never re-adds one that lapsed (or was freed), since
-- another holder may have its place by now (a `shared: 1` cluster would be booked twice).
-- KEYS: pairs of (pool set, run set). ARGV: ttl ms, then pairs of (member, run member).
-- Returns, per pair, 1 renewed or 0 lapsed.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[1])
local renewed = {}
for i = 1, #KEYS, 2 do
  local member = ARGV[i + 1]
  local score = redis.call('ZSCORE', KEYS[i], member)
  if score and tonumber(score) > ms then
    redis.call('ZADD', KEYS[i], 'XX', ms + ttl, member)
    redis.call('ZADD', KEYS[i + 1], ms + ttl, ARGV[i + 2])
    redis.call('PEXPIRE', KEYS[i], ttl * 2)
    redis.call('PEXPIRE', KEYS[i + 1], ttl * 2)
    renewed[#renewed + 1] = 1
  else
    redis.call('ZREM', KEYS[i], member)
    redis.call('ZREM', KEYS[i + 1], ARGV[i + 2])
    renewed[#renewed + 1] = 0
  end
end
return renewed
