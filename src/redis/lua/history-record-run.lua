-- Pools a run: drops runs that left the window or the cap (with their counts), claims the run id
-- (a run already pooled adds nothing), stores its counts and keeps its dictionary alive as long.
-- KEYS: runs set, run blob, names hash, names list. ARGV: run id, at, cutoff, ttl, max runs, blob,
-- run key prefix. Returns 1 when added.
local runs, blob, names, list = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local runId, at, cutoff, ttl, maxRuns, runPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[7]
local function drop(ids)
  for _, id in ipairs(ids) do redis.call('DEL', runPrefix .. id) end
  if #ids > 0 then redis.call('ZREM', runs, unpack(ids)) end
end
drop(redis.call('ZRANGEBYSCORE', runs, '-inf', '(' .. cutoff, 'LIMIT', 0, 1000))
if redis.call('ZADD', runs, 'NX', at, runId) == 0 then return 0 end
redis.call('SET', blob, ARGV[6], 'PX', ttl)
local excess = redis.call('ZCARD', runs) - maxRuns
if excess > 0 then drop(redis.call('ZRANGE', runs, 0, excess - 1)) end
redis.call('PEXPIRE', runs, ttl)
redis.call('PEXPIRE', names, ttl)
redis.call('PEXPIRE', list, ttl)
return 1
