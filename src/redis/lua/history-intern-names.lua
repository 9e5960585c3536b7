-- Gives every name an id in the current dictionary, adding the unknown ones; starts a new
-- dictionary (generation) first when the unknown names would take it past the cap. KEYS: the
-- generation key. ARGV: pool base key, cap, ttl ms, then the names. Returns the generation and the
-- ids in argument order. Names and ids never change within a generation.
local base, cap, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local gen = tonumber(redis.call('GET', KEYS[1]) or '0')
local function lookup(names)
  local ids, unknown = {}, 0
  for i = 4, #ARGV, 4000 do
    local found = redis.call('HMGET', names, unpack(ARGV, i, math.min(i + 3999, #ARGV)))
    for j = 1, #found do
      ids[i - 4 + j] = found[j]
      if not found[j] then unknown = unknown + 1 end
    end
  end
  return ids, unknown
end
local names = base .. ':names:' .. gen
local ids, unknown = lookup(names)
local size = redis.call('HLEN', names)
if unknown > 0 and size > 0 and size + unknown > cap then
  gen = redis.call('INCR', KEYS[1])
  names = base .. ':names:' .. gen
  ids, unknown = lookup(names)
  size = 0
end
local list = names .. ':list'
local fields, added = {}, {}
for i = 1, #ARGV - 3 do
  if not ids[i] then
    ids[i] = size
    size = size + 1
    fields[#fields + 1] = ARGV[i + 3]
    fields[#fields + 1] = ids[i]
    added[#added + 1] = ARGV[i + 3]
  else
    ids[i] = tonumber(ids[i])
  end
  if #fields >= 4000 then
    redis.call('HSET', names, unpack(fields))
    fields = {}
  end
  if #added >= 4000 then
    redis.call('RPUSH', list, unpack(added))
    added = {}
  end
end
if #fields > 0 then redis.call('HSET', names, unpack(fields)) end
if #added > 0 then redis.call('RPUSH', list, unpack(added)) end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', names, ttl)
redis.call('PEXPIRE', list, ttl)
table.insert(ids, 1, gen)
return ids
