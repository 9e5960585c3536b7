-- Adds a run's counts to its payload's entry, compare-and-set on the entry's version: drops the
-- entries no run joined for the window, claims the run id (a run already pooled adds nothing),
-- writes the merged counts the caller computed from version `expected` (-1 when the entry changed
-- since: read again and retry), then keeps at most max payloads and max runs (the payloads run
-- longest ago leave first, whole). KEYS: payloads set, entry hash, names hash, names list. ARGV:
-- entry id, run id, at, cutoff, ttl, max runs, max payloads, expected version ('' for a new
-- entry), counts blob, release, payload, entry key prefix. Returns 1 when added, 0 when the run
-- was already pooled, -1 on a conflict.
local payloads, entry, names, list = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local entryId, runId, at, cutoff, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local maxRuns, maxPayloads, expected, prefix = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8], ARGV[12]
local function drop(ids, from)
  for i = from or 1, #ids do
    redis.call('DEL', prefix .. ids[i])
    redis.call('ZREM', payloads, ids[i])
  end
end
drop(redis.call('ZRANGEBYSCORE', payloads, '-inf', '(' .. cutoff, 'LIMIT', 0, 1000))
if redis.call('HEXISTS', entry, 'run:' .. runId) == 1 then return 0 end
local version = redis.call('HGET', entry, 'ver')
if (version or '') ~= expected then return -1 end
redis.call('HSET', entry, 'counts', ARGV[9], 'ver', tonumber(version or '0') + 1, 'run:' .. runId, '1')
redis.call('HINCRBY', entry, 'runs', 1)
if not version then
  redis.call('HSET', entry, 'release', ARGV[10], 'payload', ARGV[11], 'first', at, 'last', at)
else
  if at < tonumber(redis.call('HGET', entry, 'first')) then redis.call('HSET', entry, 'first', at) end
  if at > tonumber(redis.call('HGET', entry, 'last')) then redis.call('HSET', entry, 'last', at) end
end
-- Scored by the entry's latest run: a payload leaves when no run joined it for the window.
local score = redis.call('ZSCORE', payloads, entryId)
if not score or at > tonumber(score) then redis.call('ZADD', payloads, at, entryId) end
redis.call('PEXPIRE', entry, ttl)
local excess = redis.call('ZCARD', payloads) - maxPayloads
if excess > 0 then drop(redis.call('ZRANGE', payloads, 0, excess - 1)) end
local newestFirst = redis.call('ZREVRANGE', payloads, 0, -1)
local total = 0
for index, id in ipairs(newestFirst) do
  total = total + tonumber(redis.call('HGET', prefix .. id, 'runs') or '0')
  if total > maxRuns and index > 1 then
    drop(newestFirst, index)
    break
  end
end
redis.call('PEXPIRE', payloads, ttl)
redis.call('PEXPIRE', names, ttl)
redis.call('PEXPIRE', list, ttl)
return 1
