/**
 * The Lua the stores run, each script atomic on the server. They run as Redis
 * functions (functions.ts: one library, loaded once, called with FCALL), not
 * with EVAL: a user that may EVAL may run any Lua, and a Lua loop blocks the
 * whole Redis. Each body sees KEYS and ARGV as a script would; the KEYS get
 * the key prefix like any key.
 */

/** Claim reply: `[1]` acquired, or `[0, value, pttl]` of the entry that holds the key. */
export type ClaimReply = [1] | [0, string, number]

/** Login-lock reply: a session that replaces the rejected one, the lock taken, or someone else's lock. */
export type LoginLockReply = ['session', string] | ['locked'] | ['wait']

export const SCRIPTS: Record<'stateClaim' | 'stateSettle' | 'stateLoginLock' | 'stateRelease' | 'eventsAppend' | 'eventsSince', { numberOfKeys: number, lua: string }> = {
  // SET NX PX, and when the key is taken, what holds it, in the same round trip.
  stateClaim: {
    numberOfKeys: 1,
    lua: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
return {0, redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}`
  },
  // Replaces the caller's own claim (ARGV[1]) with its outcome (ARGV[2], PX ARGV[3]).
  // An absent key is written too: Redis lost the claim, and the outcome exists all
  // the same. Writing the same outcome again (a retry after a lost reply) succeeds.
  // A key claimed by someone else is left alone.
  stateSettle: {
    numberOfKeys: 1,
    lua: `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] or current == false or current == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0`
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
  if ok and type(session) == 'table' and session.v == 1 and session.authorization ~= ARGV[1] then return {'session', current} end
end
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return {'locked'} end
return {'wait'}`
  },
  // Appends an event (ARGV[3], format ARGV[4]) to the log, keeping at most ARGV[1]
  // entries and none older than the id ARGV[2]; answers its id. Trimmed exactly
  // (not `~`): one or two entries per append, and the window is what readers are told.
  // Once per event: KEYS[2] (the event's own token) remembers its id for ARGV[5] ms,
  // so that an append retried after a reply that was lost answers that id instead of
  // adding the event a second time.
  eventsAppend: {
    numberOfKeys: 2,
    lua: `
local appended = redis.call('GET', KEYS[2])
if appended then return appended end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], '*', 'v', ARGV[4], 'e', ARGV[3])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[2])
redis.call('SET', KEYS[2], id, 'PX', ARGV[5])
return id`
  },
  // The entries after the id ARGV[1] (at most ARGV[2], at least 1: COUNT 0 answers nil), or nil when the log no longer
  // holds that position: the id itself must still be there, or be 0-0 in a log that
  // never dropped an entry (a new log, after a restart without persistence, has
  // entries-added == length too, but no reader of the old one holds 0-0 but by never
  // having seen an event).
  eventsSince: {
    numberOfKeys: 1,
    lua: `
local key = KEYS[1]
if ARGV[1] == '0-0' then
  if redis.call('EXISTS', key) == 1 then
    local info = redis.call('XINFO', 'STREAM', key)
    local length, added
    for i = 1, #info, 2 do
      if info[i] == 'length' then length = info[i + 1] elseif info[i] == 'entries-added' then added = info[i + 1] end
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
