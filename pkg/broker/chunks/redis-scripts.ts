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
 * ARGV: query, now (ms), ttl (s), firehose MAXLEN, per-query MAXLEN, query as JSON, ISO time,
 * error flags ("0"/"1" per chunk), the chunks' JSON joined by newlines (JSON.stringify never
 * writes a raw newline; one argument instead of one per chunk halves the client's encoding work
 * and the protocol's framing). Opens a new run when the
 * stream is unknown or completed (runAfter = the sequence before its first record). Returns the
 * first sequence used (or the next one when there were no chunks).
 */
export const APPEND_SCRIPT = `${NEXT_SEQ}${HEAD}
local now, ttl, fhMax, qMax, flags = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[8]
local cur = current()
local completed = redis.call('HGET', KEYS[4], 'completed')
if completed == false or completed == '1' then
  redis.call('HSET', KEYS[4], 'runAfter', string.format('%d', cur), 'completed', '0')
end
redis.call('HSET', KEYS[4], 'last', now)
local n = string.len(flags)
local all, from = ARGV[9], 1
for i = 1, n do
  local seq = cur + i
  local to = string.find(all, '\\n', from, true) or (string.len(all) + 1)
  local r = head(seq) .. ',"type":"chunk","chunk":' .. string.sub(all, from, to - 1) .. '}'
  from = to + 1
  if string.sub(flags, i, i) == '1' then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', fhMax, id(seq), 'r', r, 'e', '1')
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', qMax, id(seq), 'r', r, 'e', '1')
  else
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', fhMax, id(seq), 'r', r)
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', qMax, id(seq), 'r', r)
  end
end
if n > 0 then redis.call('SET', KEYS[1], string.format('%d', cur + n)) end
touch(now, ttl)
return cur + 1
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
