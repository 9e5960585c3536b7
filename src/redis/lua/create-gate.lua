-- Joins the active gate of a request key if it still exists; else writes the new gate, every run of
-- it (record and dedupe key) and claims the key, in one step: there is never a gate without all of
-- its runs, nor a run of a gate that was not stored.
-- KEYS: request key, gate hash, then per run its record key and its dedupe key.
-- ARGV: gate id, active TTL, gate TTL, gate key prefix, gate JSON, run TTL, then per run its record
-- JSON and its id. Returns the id of the gate that stands.
local existing = redis.call('GET', KEYS[1])
if existing and redis.call('EXISTS', ARGV[4] .. existing) == 1 then return existing end
redis.call('HSET', KEYS[2], 'gate', ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[3])
for run = 1, (#KEYS - 2) / 2 do
  redis.call('SET', KEYS[1 + 2 * run], ARGV[5 + 2 * run], 'EX', ARGV[6])
  redis.call('SET', KEYS[2 + 2 * run], ARGV[6 + 2 * run], 'EX', ARGV[6])
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
