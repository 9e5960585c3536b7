-- Compare-and-set of a run record on its revision (-1: the record must not exist yet), and on
-- conclusion the release of its dedupe key: one round trip, atomic, safe on a shared connection.
-- A PR run's installation keeps the set of its active runs here too (added while active, removed
-- once concluded), so that admission reads its own installation's runs instead of every run.
-- KEYS: run record, dedupe key, and for a PR run its installation's active set. ARGV: expected
-- revision, record JSON, TTL seconds, '1' when concluded, run id.
local current = redis.call('GET', KEYS[1])
if current then
  if cjson.decode(current).revision ~= tonumber(ARGV[1]) then return 0 end
elseif tonumber(ARGV[1]) ~= -1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if ARGV[4] == '1' and redis.call('GET', KEYS[2]) == ARGV[5] then redis.call('DEL', KEYS[2]) end
if KEYS[3] then
  if ARGV[4] == '1' then redis.call('SREM', KEYS[3], ARGV[5]) else redis.call('SADD', KEYS[3], ARGV[5]) end
end
return 1
