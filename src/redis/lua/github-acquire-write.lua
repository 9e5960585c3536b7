-- A sliding window of GitHub writes over the last minute, shared by every bot process, plus a
-- pause a rate-limited response imposes on everyone, and the pause of a missing permission (which
-- no waiting ends). KEYS: window set, pause key, missing-permission key. ARGV: window ms, writes per
-- window, member, '1' when the missing permission stops this write. Returns 0 (go), the milliseconds
-- to wait, or (a string) the permission the installation lacks.
if ARGV[4] == '1' then
  local missing = redis.call('GET', KEYS[3])
  if missing then return missing end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
if paused > now then return paused - now end
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
