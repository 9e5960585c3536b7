-- Reserves a run's whole need of a source's quota at once, or queues it: no partial holds.
-- KEYS: the quota's lease set, its ticket queue (scored by priority band, then arrival), its ticket
-- expiries, the run's lease set. ARGV: lease ttl ms, ticket ttl ms, ticket (run id), priority band
-- (0 first), capacity, how many leases, then that many members, then as many run members.
-- Only the ticket at the head of the queue is served, and only when all of its leases fit: a small
-- request never overtakes a large one that waits, and nobody holds a part while waiting. A waiter
-- that stops asking (its replica died) loses its ticket after the ticket ttl.
-- Returns { 1 granted / 0 waiting, tickets ahead, leases held in the quota }.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[1])
local ticketTtl = tonumber(ARGV[2])
local ticket = ARGV[3]
local band = tonumber(ARGV[4])
local capacity = tonumber(ARGV[5])
local count = tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ms)) do
  redis.call('ZREM', KEYS[2], gone)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ms)
if not redis.call('ZSCORE', KEYS[2], ticket) then
  -- Bands are 1e13 ms (three centuries) apart: any arrival time sorts inside its band.
  redis.call('ZADD', KEYS[2], band * 1e13 + ms, ticket)
end
redis.call('ZADD', KEYS[3], ms + ticketTtl, ticket)
redis.call('PEXPIRE', KEYS[2], ticketTtl * 2)
redis.call('PEXPIRE', KEYS[3], ticketTtl * 2)
local held = redis.call('ZCARD', KEYS[1])
local missing = 0
for i = 1, count do
  if not redis.call('ZSCORE', KEYS[1], ARGV[6 + i]) then missing = missing + 1 end
end
-- A run that holds all of it already (resumed after a restart) keeps it without queueing.
local ahead = 0
if missing > 0 then ahead = redis.call('ZRANK', KEYS[2], ticket) end
if ahead > 0 then return { 0, ahead, held } end
if capacity >= 0 and held + missing > capacity then return { 0, 0, held } end
for i = 1, count do
  redis.call('ZADD', KEYS[1], ms + ttl, ARGV[6 + i])
  redis.call('ZADD', KEYS[4], ms + ttl, ARGV[6 + count + i])
end
redis.call('ZREM', KEYS[2], ticket)
redis.call('ZREM', KEYS[3], ticket)
redis.call('PEXPIRE', KEYS[1], ttl * 2)
redis.call('PEXPIRE', KEYS[4], ttl * 2)
return { 1, 0, held + missing }
