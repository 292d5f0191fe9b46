import type { ConnectionOptions } from 'node:tls'
import type { FastifyBaseLogger } from 'fastify'
import { Redis, type RedisOptions } from 'ioredis'
import type { StoreHealth } from '../types.ts'
import { GuardedConnector } from './connector.ts'
import { SCRIPTS } from './scripts.ts'

export interface RedisConnectionOptions {
  /** `redis://` or `rediss://` (TLS), with `user:password@` when the server wants them, and `/db`. */
  url: string
  /** Prepended to every key (REDIS_KEY_PREFIX), so that several gateways can share a Redis. */
  keyPrefix: string
  /** No command waits longer than this: it fails instead, and the store degrades. */
  commandTimeoutMs: number
  log: FastifyBaseLogger
  /** How often a PING checks that a connected Redis still answers (default 1000 ms). */
  healthCheckIntervalMs?: number
  /** The longest wait between two reconnection attempts (default 2000 ms); they never stop. */
  reconnectMaxDelayMs?: number
  /** TLS settings for `rediss://` beyond Node's defaults, such as the `ca` of a private authority. */
  tls?: ConnectionOptions
}

/** One process's connections to Redis, shared by all the stores. */
export interface RedisConnection {
  /** Commands. Keys get the prefix from ioredis (`keyPrefix`), script KEYS included. */
  readonly client: Redis
  /**
   * A connection for blocking reads (XREAD BLOCK: a blocked connection answers
   * nothing else), created on first use. Its commands may wait `blockMs` plus
   * the command timeout; it is not PINGed by the health check (the PING would
   * wait behind the read): its user reopens it when reads keep timing out.
   */
  reader (blockMs: number): Redis
  readonly keyPrefix: string
  readonly commandTimeoutMs: number
  readonly log: FastifyBaseLogger
  /** Whether the command connection is connected and answering. */
  health (): StoreHealth
  /** Called on every change of health(); returns the unsubscribe function. */
  onHealthChange (listener: (health: StoreHealth) => void): () => void
  /** Resolves true as soon as health() is up, false when timeoutMs passed first. */
  whenUp (timeoutMs: number): Promise<boolean>
  /** Ends both connections; the stores answer as with Redis down afterwards. */
  close (): Promise<void>
}

/**
 * What may be logged of a Redis error: its message. ioredis attaches the
 * failed command to the errors Redis answers, arguments included, that is
 * the values written (a hub session, a stored answer), which pino's error
 * serializer would print in full.
 */
export function redisReason (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Consecutive failed health checks after which a connection that looks open is dropped and reopened. */
const STALE_AFTER_FAILED_CHECKS = 3

/**
 * Exponential backoff from 50 ms, capped, with jitter so that replicas do not
 * reconnect in step; never gives up (a number is always returned).
 */
function backoff (maxDelayMs: number) {
  return (attempt: number) => Math.min(maxDelayMs, 50 * 2 ** Math.min(attempt - 1, 16)) + Math.floor(Math.random() * 50)
}

/**
 * The connection set of one process. Redis trouble must never hold a request
 * longer than the command timeout, so commands never wait for a connection:
 * with the offline queue off, a command sent while disconnected fails at
 * once; with maxRetriesPerRequest 0 and no resending, a command in flight
 * when the connection drops fails instead of being replayed later (a claim
 * replayed after its caller gave up would block the key for nobody).
 * A periodic PING tells a frozen Redis (connected, not answering) from a
 * live one, so that the stores stop trying it until it answers again.
 */
export function createRedisConnection (options: RedisConnectionOptions): RedisConnection {
  const { keyPrefix, commandTimeoutMs, log } = options
  const url = parseUrl(options.url)
  const redisOptions: RedisOptions = {
    keyPrefix,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 2000),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: backoff(options.reconnectMaxDelayMs ?? 2000),
    // RESP2: everything the gateway uses, as ioredis 5 spoke it.
    protocol: 2,
    // The scheme decides, whatever its case (ioredis itself only recognises lower-case `rediss://`).
    ...(url.protocol === 'rediss:' ? { tls: { ...options.tls } } : {}),
    scripts: SCRIPTS,
    Connector: GuardedConnector
  }
  const client = new Redis(options.url, redisOptions)
  let reader: Redis | undefined
  let closed = false
  let current: StoreHealth = 'down'
  let lastError: string | undefined
  const listeners = new Set<(health: StoreHealth) => void>()

  function setHealth (next: StoreHealth, reason?: string) {
    if (next === current) return
    current = next
    if (next === 'up') log.info('redis up')
    else log.warn({ reason: reason ?? lastError }, 'redis down')
    for (const listener of listeners) listener(next)
  }

  // Every error is reported here too, reconnection attempts included: an
  // 'error' without a listener would throw. Messages name the address, never the password.
  function watch (connection: Redis, name: 'commands' | 'reader') {
    connection.on('error', (error: Error) => {
      lastError = error.message
      log.debug({ connection: name, reason: error.message }, 'redis connection error')
    })
    if (name === 'commands') {
      connection.on('ready', () => setHealth('up'))
      connection.on('close', () => setHealth('down', lastError ?? 'connection closed'))
    }
  }
  watch(client, 'commands')

  // A connection that stays open but stopped answering (a frozen server, a
  // half-open TCP connection) shows in failed PINGs only.
  const failedChecks = new Map<Redis, number>()
  let checking = false
  async function check (connection: Redis): Promise<boolean> {
    if (connection.status !== 'ready') return false
    try {
      await connection.ping()
      failedChecks.set(connection, 0)
      return true
    } catch (error) {
      lastError = redisReason(error)
      const failed = (failedChecks.get(connection) ?? 0) + 1
      failedChecks.set(connection, failed)
      if (failed >= STALE_AFTER_FAILED_CHECKS && !closed) {
        failedChecks.set(connection, 0)
        log.warn({ reason: lastError }, 'redis connection not answering: reconnecting')
        connection.disconnect(true)
      }
      return false
    }
  }
  const timer = setInterval(() => {
    if (checking || closed) return
    checking = true
    check(client)
      .then((up) => setHealth(up ? 'up' : 'down'))
      .finally(() => { checking = false })
  }, options.healthCheckIntervalMs ?? 1000)
  timer.unref()

  return {
    client,
    reader (blockMs) {
      if (reader === undefined) {
        reader = client.duplicate({ commandTimeout: blockMs + commandTimeoutMs })
        watch(reader, 'reader')
      }
      return reader
    },
    keyPrefix,
    commandTimeoutMs,
    log,
    health: () => (closed ? 'down' : current),
    onHealthChange (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    whenUp (timeoutMs) {
      if (current === 'up' && !closed) return Promise.resolve(true)
      return new Promise((resolve) => {
        const done = (up: boolean) => {
          clearTimeout(timeout)
          listeners.delete(listener)
          resolve(up)
        }
        const listener = (health: StoreHealth) => { if (health === 'up') done(true) }
        const timeout = setTimeout(() => done(false), timeoutMs)
        listeners.add(listener)
      })
    },
    async close () {
      if (closed) return
      closed = true
      clearInterval(timer)
      listeners.clear()
      current = 'down'
      await Promise.all([end(client, commandTimeoutMs), reader === undefined ? undefined : end(reader, commandTimeoutMs)])
      log.info('redis connections closed')
    }
  }
}

/** Checks the scheme without ever echoing the address, which may hold a password. */
function parseUrl (value: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error('the Redis URL is not a URL (expected redis://[user:password@]host[:port][/db] or rediss://...)')
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new Error(`the Redis URL must start with redis:// or rediss://, not ${url.protocol}//`)
  }
  return url
}

/**
 * Closes a connection now, waiting (bounded) for its socket to close. One
 * between two reconnection attempts just stops trying: ioredis emits no 'end' then.
 */
async function end (connection: Redis, waitMs: number): Promise<void> {
  if (connection.status === 'end') return
  const waiting = connection.status !== 'reconnecting' && connection.status !== 'wait'
  const ended = new Promise<void>((resolve) => {
    if (!waiting) return resolve()
    const timeout = setTimeout(resolve, waitMs)
    connection.once('end', () => { clearTimeout(timeout); resolve() })
  })
  connection.disconnect()
  await ended
}
