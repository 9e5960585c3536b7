-- A run's subject was told the run at a revision: unless the record moved on meanwhile, the run
-- leaves the unpublished set. One round trip for the check and the unmarking, so a publisher
-- needs no read of its own to learn that a newer state is waiting.
-- KEYS: run record, unpublished set. ARGV: revision told, run id.
-- Returns nil (done; also when the record is gone) or the newer record, still to be told.
local current = redis.call('GET', KEYS[1])
if current and cjson.decode(current).revision ~= tonumber(ARGV[1]) then return current end
redis.call('ZREM', KEYS[2], ARGV[2])
return false
