-- Takes a lease on a cluster under test (or a slot of a source's quota).
-- KEYS: the cluster's lease set, the run's lease set. ARGV: ttl ms, member, run member, capacity
-- (-1: no limit), payload ('' : any). A member ends with '|<payload>': a cluster is shared only by
-- holders of one payload. Returns 1 when held (taken now or already), 0 when full or pinned.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[1])
local member = ARGV[2]
local capacity = tonumber(ARGV[4])
local payload = ARGV[5]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
if not redis.call('ZSCORE', KEYS[1], member) then
  local held = redis.call('ZRANGE', KEYS[1], 0, -1)
  if capacity >= 0 and #held >= capacity then return 0 end
  if payload ~= '' then
    local suffix = '|' .. payload
    for _, other in ipairs(held) do
      if string.sub(other, -#suffix) ~= suffix then return 0 end
    end
  end
end
redis.call('ZADD', KEYS[1], ms + ttl, member)
redis.call('ZADD', KEYS[2], ms + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
redis.call('PEXPIRE', KEYS[2], ttl * 2)
return 1
