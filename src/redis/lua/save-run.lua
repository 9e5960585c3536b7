-- Compare-and-set of a run record on its revision (-1: the record must not exist yet), and on
-- conclusion the release of its dedupe key: one round trip, atomic, safe on a shared connection.
-- KEYS: run record, dedupe key. ARGV: expected revision, record JSON, TTL seconds, '1' when
-- concluded, run id.
local current = redis.call('GET', KEYS[1])
if current then
  if cjson.decode(current).revision ~= tonumber(ARGV[1]) then return 0 end
elseif tonumber(ARGV[1]) ~= -1 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if ARGV[4] == '1' and redis.call('GET', KEYS[2]) == ARGV[5] then redis.call('DEL', KEYS[2]) end
return 1
