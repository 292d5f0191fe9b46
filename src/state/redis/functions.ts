import { createHash } from 'node:crypto'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { SCRIPTS, type ClaimReply, type LoginLockReply } from './scripts.ts'

/**
 * The gateway's Lua as one Redis function library (Redis 7 and later), so
 * that its Redis user needs FCALL and never EVAL or SCRIPT LOAD, with which
 * any Lua could be run (`while true do end` stops every client of that
 * Redis; docs/deployment.md#redis). The library is loaded once by a user that may
 * (`node dist/redis-functions.js`, or the gateway itself when its own user
 * may: a Redis without ACLs); functions are kept in Redis's data files and
 * copied to its replicas, unlike the script cache that EVALSHA reads.
 *
 * Its name carries a hash of its code: gateways of other versions sharing a
 * Redis each find their own, and a changed script is a new library.
 */

interface ScriptSource { numberOfKeys: number, lua: string }

/**
 * @fastify/rate-limit's two scripts, as the installed plugin defines them:
 * its RedisStore, made on a recorder, hands them to `defineCommand`.
 * Taken from the plugin rather than copied, so that an upgrade of the plugin
 * brings its scripts (and a new library name) along.
 */
function rateLimitScripts (): Record<'rateLimit' | 'rateLimitRead', ScriptSource> {
  const defined = new Map<string, ScriptSource>()
  const recorder = { defineCommand: (name: string, definition: ScriptSource) => { defined.set(name, definition) } }
  // eslint-disable-next-line no-new -- the constructor's side effect (defineCommand) is what is wanted
  new RedisStore(false, false, recorder)
  const rateLimit = defined.get('rateLimit')
  const rateLimitRead = defined.get('rateLimitRead')
  if (rateLimit === undefined || rateLimitRead === undefined) throw new Error('@fastify/rate-limit\'s RedisStore no longer defines rateLimit and rateLimitRead: state/redis/functions.ts must follow it')
  return { rateLimit, rateLimitRead }
}

const SOURCES = { ...SCRIPTS, ...rateLimitScripts() }
export type ScriptName = keyof typeof SOURCES

/** Functions that write nothing: flagged so, they still run when Redis is out of memory. */
const READ_ONLY = new Set<ScriptName>(['rateLimitRead', 'eventsSince'])

export interface FunctionLibrary {
  /** `customs_gateway_` and the first 12 hex digits of the code's SHA-256. */
  readonly name: string
  /** The library's source, for FUNCTION LOAD. */
  readonly code: string
  functionName (script: ScriptName): string
}

function buildLibrary (): FunctionLibrary {
  const names = Object.keys(SOURCES).sort() as ScriptName[]
  const hash = createHash('sha256').update(JSON.stringify(names.map(name => [name, SOURCES[name].numberOfKeys, SOURCES[name].lua, READ_ONLY.has(name)]))).digest('hex').slice(0, 12)
  const name = `customs_gateway_${hash}`
  const functionName = (script: ScriptName) => `${name}_${script}`
  const functions = names.map(script =>
    `redis.register_function{function_name='${functionName(script)}', flags={${READ_ONLY.has(script) ? "'no-writes'" : ''}}, callback=function(KEYS, ARGV)\n${SOURCES[script].lua.trim()}\nend}`)
  const code = [
    `#!lua name=${name}`,
    '-- customs-gateway: the Lua its stores run (docs/deployment.md#redis). ' +
      'Generated: node dist/redis-functions.js prints it.',
    ...functions
  ].join('\n') + '\n'
  return { name, code, functionName }
}

/** The library of this version of the gateway. */
export const FUNCTION_LIBRARY: FunctionLibrary = buildLibrary()

/** How an administrator loads the library where the gateway's user may not. */
export const LOAD_HINT = 'load it once as a Redis user that may (FUNCTION LOAD): ' +
  'node dist/redis-functions.js --load <file holding that user\'s redis:// URL>, ' +
  'or npm run redis-functions | redis-cli -x FUNCTION LOAD (docs/deployment.md#redis)'

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Loads the library unless it is there already; the connection's user must be allowed FUNCTION LOAD. */
export async function loadFunctionLibrary (client: Redis, library: FunctionLibrary = FUNCTION_LIBRARY): Promise<'loaded' | 'present'> {
  try {
    await client.function('LOAD', library.code)
    return 'loaded'
  } catch (error) {
    // Loaded already (by an administrator, another replica, or this one a moment ago).
    if (/already exists/i.test(messageOf(error))) return 'present'
    throw error
  }
}

/** The stores' scripts, as calls of the library's functions. */
export interface GatewayScripts {
  /** SET NX PX, and when the key is taken, what holds it (scripts.ts). */
  stateClaim (key: string, value: string, ttlMs: number): Promise<ClaimReply>
  /** The claim `claim` marked sending, with its lease by Redis's clock: 1, or 0 when not held. */
  stateSend (key: string, claim: string, leaseMs: number, ttlMs: number): Promise<number>
  /**
   * The claim of `token` settled with `value` (empty: freed): 1, or 0 when not held. Refused
   * while fewer replicas are online than `replicas` (scripts.ts).
   */
  stateFinish (key: string, token: string, value: string, ttlMs: number,
    replicas: number): Promise<number>
  stateLoginLock (sessionKey: string, lockKey: string, rejected: string, lock: string, lockTtlMs: number): Promise<LoginLockReply>
  stateRelease (key: string, expected: string): Promise<number>
  /**
   * Appends an event to the log stream, trimmed to the window, once per token (tokenKey, the
   * entry's `t`); its id. Refused while fewer replicas are online than `replicas` (scripts.ts).
   */
  eventsAppend (key: string, tokenKey: string, maxEntries: number, minId: string, event: string,
    version: string, tokenTtlMs: number, replicas: number, token: string): Promise<string>
  /** The entries after `id`, or null when the stream no longer holds that position. */
  eventsSince (key: string, id: string, count: number): Promise<Array<[string, string[]]> | null>
  /** @fastify/rate-limit's counting script: `[current, ttl]`. */
  rateLimit (key: string, timeWindow: number, max: number, continueExceeding: boolean, exponentialBackoff: boolean): Promise<[number, number]>
  rateLimitRead (key: string): Promise<[number, number]>
  /**
   * Makes sure the library is there: loads it when it is missing and this
   * user may, else logs how to load it. Resolves whether it can be called.
   */
  ensure (): Promise<boolean>
}

/**
 * The functions called over `client` (keys get its key prefix, as FCALL's
 * keys are known to ioredis). A call that finds the library missing (a new
 * Redis, FUNCTION FLUSH) loads it when this user may, then calls again;
 * when it may not, the call fails (the store degrades as with Redis down)
 * and the log says how to load it, once until a call succeeds again.
 */
export function createGatewayScripts (client: Redis, log: FastifyBaseLogger, library: FunctionLibrary = FUNCTION_LIBRARY): GatewayScripts {
  let loading: Promise<unknown> | undefined
  let reported = false

  async function fcall (script: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    return await client.fcall(library.functionName(script), keys.length, ...keys, ...args)
  }

  async function load (): Promise<void> {
    loading ??= loadFunctionLibrary(client, library).then(
      (outcome) => { if (outcome === 'loaded') log.info({ library: library.name }, 'redis: loaded the gateway\'s function library') },
      (error: unknown) => {
        if (!reported) log.error({ library: library.name, reason: messageOf(error) }, `redis: the gateway's function library ${library.name} is not loaded, and this Redis user may not load it: ${LOAD_HINT}`)
        reported = true
        throw error
      }).finally(() => { loading = undefined })
    await loading
  }

  async function call (script: ScriptName, keys: string[], args: Array<string | number>): Promise<unknown> {
    let result: unknown
    try {
      result = await fcall(script, keys, args)
    } catch (error) {
      if (!/function not found/i.test(messageOf(error))) throw error
      try {
        await load()
      } catch {
        throw error
      }
      result = await fcall(script, keys, args)
    }
    reported = false
    return result
  }

  return {
    stateClaim: async (key, value, ttlMs) => await call('stateClaim', [key], [value, ttlMs]) as ClaimReply,
    stateSend: async (key, claim, leaseMs, ttlMs) =>
      await call('stateSend', [key], [claim, leaseMs, ttlMs]) as number,
    stateFinish: async (key, token, value, ttlMs, replicas) =>
      await call('stateFinish', [key], [token, value, ttlMs, replicas]) as number,
    stateLoginLock: async (sessionKey, lockKey, rejected, lock, lockTtlMs) => await call('stateLoginLock', [sessionKey, lockKey], [rejected, lock, lockTtlMs]) as LoginLockReply,
    stateRelease: async (key, expected) => await call('stateRelease', [key], [expected]) as number,
    eventsAppend: async (key, tokenKey, maxEntries, minId, event, version, tokenTtlMs, replicas,
      token) => await call('eventsAppend', [key, tokenKey],
      [maxEntries, minId, event, version, tokenTtlMs, replicas, token]) as string,
    eventsSince: async (key, id, count) => await call('eventsSince', [key], [id, count]) as Array<[string, string[]]> | null,
    rateLimit: async (key, timeWindow, max, continueExceeding, exponentialBackoff) =>
      await call('rateLimit', [key], [timeWindow, max, String(continueExceeding), String(exponentialBackoff)]) as [number, number],
    rateLimitRead: async (key) => await call('rateLimitRead', [key], []) as [number, number],
    async ensure () {
      try {
        // A read of a key nobody writes: it finds the library, or loads it.
        await call('rateLimitRead', ['functions-check'], [])
        return true
      } catch {
        return false
      }
    }
  }
}
