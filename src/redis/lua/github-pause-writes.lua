-- Pauses every process's GitHub writes for ARGV[1] ms unless a longer pause is in force.
-- KEYS: pause key. Returns the end of the pause (ms).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ = now + tonumber(ARGV[1])
if until_ > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], until_, 'PX', ARGV[1])
end
return until_
