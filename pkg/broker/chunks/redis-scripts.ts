/**
 * The chunk store's writes as Lua scripts. A script runs atomically in Redis, which is what makes
 * the sequences safe with many replicas: taking the next sequences and appending the entries with
 * those ids (`<seq>-0`) happen in one step, so the firehose's ids always arrive in increasing order
 * (with a separate INCR, a replica could take 7, another 8, and 8 could be appended first — then 7 is
 * refused). One script call per batch is also one round trip per batch, not per chunk.
 *
 * Keys (all under the store's prefix): 1 `seq` counter (never deleted, not even by a purge),
 * 2 `fh` firehose stream, 3 `q:<query>` stream, 4 `st:<query>` state hash, 5 `streams` index
 * (sorted set: query → last activity in ms, for purge and index upkeep).
 * Entries (firehose and per-query stream alike): `r` the record's JSON as served (built here, byte
 * for byte what `storedChunk` in types.ts builds), then `e 1` only on an error chunk. One field
 * on purpose: decoding the reader's replies is the main cost of live delivery and grows with the
 * number of RESP items, not their size (the query is read back from the record's head).
 */

// The last sequence handed out: the counter, or the firehose's last id if that is higher — the
// counter key lost (an eviction policy that evicts any key, a manual DEL) or a script stopped half
// way (a Redis error between its XADDs and its SET) must never make a sequence be handed out twice.
// XREVRANGE COUNT 1 reads the stream's last node: constant time.
const NEXT_SEQ = `
local function current()
  local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  if last[1] then
    local top = tonumber((string.gsub(last[1][1], '%-.*$', '')))
    if top > cur then cur = top end
  end
  return cur
end
local function id(seq) return string.format('%d-0', seq) end
local function touch(now, ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
  redis.call('EXPIRE', KEYS[4], ttl)
  redis.call('ZADD', KEYS[5], now, ARGV[1])
end
`;

/** The record JSON head: `{"sequence":…,"query":…,"timestamp":"…"` (ARGV[6] = query as JSON, ARGV[7] = ISO time). */
const HEAD = `
local function head(seq)
  return '{"sequence":' .. string.format('%d', seq) .. ',"query":' .. ARGV[6] .. ',"timestamp":"' .. ARGV[7] .. '"'
end
`;

/**
 * ARGV: query, now (ms), ttl (s), firehose MAXLEN, per-query MAXLEN, query as JSON, ISO time. Returns -1 for an unknown
 * stream, 0 when it was already completed, else the marker's sequence.
 */
export const COMPLETE_SCRIPT = `${NEXT_SEQ}${HEAD}
local now, ttl, fhMax, qMax = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local completed = redis.call('HGET', KEYS[4], 'completed')
if completed == false then return -1 end
if completed == '1' then return 0 end
local seq = current() + 1
local r = head(seq) .. ',"type":"complete"}'
redis.call('XADD', KEYS[2], 'MAXLEN', '~', fhMax, id(seq), 'r', r)
redis.call('XADD', KEYS[3], 'MAXLEN', '~', qMax, id(seq), 'r', r)
redis.call('SET', KEYS[1], string.format('%d', seq))
redis.call('HSET', KEYS[4], 'completed', '1', 'last', now)
touch(now, ttl)
return seq
`;

/**
 * The appends of several requests (one group per query) as one script call: what the appends of one
 * event-loop turn become (redis-group-append.ts). KEYS: 1 `seq`, 2 `fh`, 3 `streams`, then per
 * group `q:<query>` and `st:<query>`. ARGV: now (ms), ttl (s), firehose MAXLEN, per-query MAXLEN,
 * ISO time, then per group its query, the query as JSON, its flags and its chunks' JSON joined by
 * newlines (as APPEND_SCRIPT). The groups take consecutive sequences in order; returns each group's
 * first sequence.
 */
export const APPEND_MANY_SCRIPT = `${NEXT_SEQ}
local now, ttl, fhMax, qMax, iso = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local cur = current()
local firsts = {}
for g = 1, (#ARGV - 5) / 4 do
  local qKey, stKey = KEYS[2 + 2 * g], KEYS[3 + 2 * g]
  local a = 5 + 4 * (g - 1)
  local query, qjson, flags, all = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local completed = redis.call('HGET', stKey, 'completed')
  if completed == false or completed == '1' then
    redis.call('HSET', stKey, 'runAfter', string.format('%d', cur), 'completed', '0')
  end
  redis.call('HSET', stKey, 'last', now)
  firsts[g] = cur + 1
  local head = ',"query":' .. qjson .. ',"timestamp":"' .. iso .. '","type":"chunk","chunk":'
  local from = 1
  for i = 1, string.len(flags) do
    cur = cur + 1
    local to = string.find(all, '\\n', from, true) or (string.len(all) + 1)
    local r = '{"sequence":' .. string.format('%d', cur) .. head .. string.sub(all, from, to - 1) .. '}'
    from = to + 1
    if string.sub(flags, i, i) == '1' then
      redis.call('XADD', KEYS[2], 'MAXLEN', '~', fhMax, id(cur), 'r', r, 'e', '1')
      redis.call('XADD', qKey, 'MAXLEN', '~', qMax, id(cur), 'r', r, 'e', '1')
    else
      redis.call('XADD', KEYS[2], 'MAXLEN', '~', fhMax, id(cur), 'r', r)
      redis.call('XADD', qKey, 'MAXLEN', '~', qMax, id(cur), 'r', r)
    end
  end
  redis.call('EXPIRE', qKey, ttl)
  redis.call('EXPIRE', stKey, ttl)
  redis.call('ZADD', KEYS[3], now, query)
end
redis.call('SET', KEYS[1], string.format('%d', cur))
return firsts
`;
