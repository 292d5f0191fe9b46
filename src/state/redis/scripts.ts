/**
 * The Lua the stores run, each script atomic on the server. They run as Redis
 * functions (functions.ts: one library, loaded once, called with FCALL), not
 * with EVAL: a user that may EVAL may run any Lua, and a Lua loop blocks the
 * whole Redis. Each body sees KEYS and ARGV as a script would; the KEYS get
 * the key prefix like any key.
 */

/**
 * Claim reply: `[1]` acquired, or `[0, value, pttl, now]`: the entry that
 * holds the key, its time to live and Redis's clock (ms), by which leases of
 * keys being sent are read.
 */
export type ClaimReply = [1] | [0, string, number, number]

/**
 * Login-lock reply: a session that replaces the rejected one, the lock taken, or someone else's
 * lock.
 */
export type LoginLockReply = ['session', string] | ['locked'] | ['wait']

// Redis's clock in ms, for leases: one clock for every replica, whatever theirs say.
const NOW = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`

/**
 * Refuses the write while the master has fewer replicas online than ARGV[n], the replicas the
 * gateway counts in sync: one has left it (a Sentinel promoting it), and what this master takes
 * now could be missing from the new one. The caller keeps it and writes it there.
 */
const replicaLeft = (n: number) => `
local expected = tonumber(ARGV[${n}])
if expected > 0 then
  local online = 0
  for line in string.gmatch(redis.call('INFO', 'replication'), 'slave%d+:[^\\r\\n]+') do
    if string.find(line, 'state=online', 1, true) then online = online + 1 end
  end
  if online < expected then
    return redis.error_reply('ERR a replica in sync has left this master: the write waits')
  end
end`

type ScriptName = 'stateClaim' | 'stateSend' | 'stateFinish' | 'stateLoginLock' | 'stateRelease' |
  'eventsAppend' | 'eventsSince'

export const SCRIPTS: Record<ScriptName, { numberOfKeys: number; lua: string }> = {
  // An idempotency claim (ARGV[1]), kept for its lease (PX ARGV[2]): a claim whose hub call
  // never started frees its key by expiring. When the key is taken: what holds it, its TTL and
  // Redis's clock. A key being sent whose lease has passed (state/redis/idempotency.ts) is
  // turned into "unknown" right here, so that the verdict a caller is told is the one kept.
  stateClaim: {
    numberOfKeys: 1,
    lua: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
local current = redis.call('GET', KEYS[1])
${NOW}
if string.find(current, '"state":"sending"', 1, true) then
  local ok, value = pcall(cjson.decode, current)
  if ok and type(value) == 'table' and value.v == 3 and value.state == 'sending'
    and type(value.leaseUntil) == 'number' and value.leaseUntil <= now then
    current = cjson.encode({ v = 2, state = 'unknown', fingerprint = value.fingerprint })
    redis.call('SET', KEYS[1], current, 'KEEPTTL')
  end
end
return {0, current, redis.call('PTTL', KEYS[1]), now}`
  },
  // The point of no return: the caller's own claim (exactly ARGV[1]) becomes "sending", with a
  // lease of ARGV[2] ms by Redis's clock, kept for ARGV[3] ms. 0 when the key no longer holds
  // that claim (its lease ended, another request claimed it): nothing may be sent then.
  stateSend: {
    numberOfKeys: 1,
    lua: `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
${NOW}
local value = cjson.decode(ARGV[1])
value.state = 'sending'
value.leaseUntil = now + tonumber(ARGV[2])
redis.call('SET', KEYS[1], cjson.encode(value), 'PX', ARGV[3])
return 1`
  },
  // Settles the claim whose token is ARGV[1] (claimed or sending): its outcome ARGV[2] for ARGV[3]
  // ms, or the key freed when ARGV[2] is empty. An absent key gets the outcome all the same (Redis
  // lost the claim, and the outcome exists); the same outcome again (a retry after a lost reply)
  // succeeds. A key holding anything else (another claim, an "unknown" a caller was told) is left
  // alone: 0. Refused while a replica has just left the master (ARGV[4], replicaLeft).
  stateFinish: {
    numberOfKeys: 1,
    lua: `${replicaLeft(4)}
local current = redis.call('GET', KEYS[1])
if not current then
  if ARGV[2] == '' then return 0 end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
if current == ARGV[2] then return 1 end
if not string.find(current, ARGV[1], 1, true) then return 0 end
local ok, value = pcall(cjson.decode, current)
if not (ok and type(value) == 'table' and value.v == 3 and value.token == ARGV[1]) then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1`
  },
  // The shared session if it replaces the rejected authorization (ARGV[1], empty for
  // none), else the login lock (ARGV[2], PX ARGV[3]) if free: one step, so that no
  // holder can read the old session, then take the lock its predecessor just freed.
  stateLoginLock: {
    numberOfKeys: 2,
    lua: `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, session = pcall(cjson.decode, current)
  if ok and type(session) == 'table' and session.v == 1 and session.authorization ~= ARGV[1] then
    return {'session', current}
  end
end
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return {'locked'} end
return {'wait'}`
  },
  // Appends an event (ARGV[3], format ARGV[4]) to the log, keeping at most ARGV[1]
  // entries and none older than the id ARGV[2]; answers its id. Trimmed exactly
  // (not `~`): one or two entries per append, and the window is what readers are told.
  // Once per event: KEYS[2] (the event's own token) remembers its id for ARGV[5] ms,
  // so that an append retried after a reply that was lost answers that id instead of
  // adding the event a second time; the entry carries the token (ARGV[7]) too. Refused while
  // a replica has just left the master (ARGV[6], replicaLeft): an entry it took now could be
  // missing from the new master after readers saw it.
  eventsAppend: {
    numberOfKeys: 2,
    lua: `
local appended = redis.call('GET', KEYS[2])
if appended then return appended end${replicaLeft(6)}
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'v', ARGV[4], 'e', ARGV[3],
  't', ARGV[7])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[2])
redis.call('SET', KEYS[2], id, 'PX', ARGV[5])
return id`
  },
  // The entries after the id ARGV[1] (at most ARGV[2], at least 1: COUNT 0 answers nil), or nil
  // when the log no longer holds that position: the id itself must still be there, or be 0-0 in a
  // log that never dropped an entry (a new log, after a restart without persistence, has
  // entries-added == length too, but no reader of the old one holds 0-0 but by never having seen an
  // event).
  eventsSince: {
    numberOfKeys: 1,
    lua: `
local key = KEYS[1]
if ARGV[1] == '0-0' then
  if redis.call('EXISTS', key) == 1 then
    local info = redis.call('XINFO', 'STREAM', key)
    local length, added
    for i = 1, #info, 2 do
      if info[i] == 'length' then
        length = info[i + 1]
      elseif info[i] == 'entries-added' then
        added = info[i + 1]
      end
    end
    if length ~= added then return false end
  end
elseif #redis.call('XRANGE', key, ARGV[1], ARGV[1]) == 0 then
  return false
end
return redis.call('XRANGE', key, '(' .. ARGV[1], '+', 'COUNT', ARGV[2])`
  },
  // DEL only when the key still holds the caller's value (its claim or lock).
  stateRelease: {
    numberOfKeys: 1,
    lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`
  }
}
