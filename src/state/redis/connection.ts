import { randomUUID } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import type { FastifyBaseLogger } from 'fastify'
import { Redis, type RedisOptions } from 'ioredis'
import type { StoreHealth } from '../types.ts'
import { GuardedConnector, GuardedSentinelConnector } from './connector.ts'
import { createGatewayScripts, type GatewayScripts } from './functions.ts'

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
  /** How long a replica that left the master still counts in replicas() (default 5000 ms; see there). */
  replicaMemoryMs?: number
  /** TLS settings for `rediss://` beyond Node's defaults, such as the `ca` of a private authority. */
  tls?: ConnectionOptions
  /**
   * The master is found through these Sentinels (REDIS_SENTINELS) and
   * followed across failovers; the URL then gives only the user, password,
   * database and scheme (TLS, for the master and the Sentinels alike).
   */
  sentinels?: RedisSentinels
}

export interface RedisSentinels {
  addresses: Array<{ host: string, port: number }>
  /** The master's name in the Sentinels' configuration. */
  masterName: string
  username?: string
  password?: string
}

/** One process's connections to Redis, shared by all the stores. */
export interface RedisConnection {
  /** Commands. Keys get the prefix from ioredis (`keyPrefix`), the keys of FCALL included. */
  readonly client: Redis
  /** The stores' Lua, as calls of the gateway's Redis functions (functions.ts). */
  readonly scripts: GatewayScripts
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
  /** Whether the command connection is connected and answering, and whether Redis takes writes. */
  health (): StoreHealth
  /**
   * Replicas of the master in sync (online, acknowledging within a few
   * seconds), as the health checks found them: the most seen over the last
   * replicaMemoryMs on this connection, so that a replica that just left
   * (promoted by a Sentinel while this connection still holds the old master)
   * is still waited for, and a write acknowledged by the others only is
   * refused. 0 when unknown; counted afresh after each reconnection.
   */
  replicas (): number
  /**
   * Resolves once every replica in sync (replicas()) holds the writes made on
   * the command connection so far (WAIT, at most timeoutMs); rejects
   * otherwise. Every replica, not one: a Sentinel may promote any of them,
   * and one being promoted has already stopped taking this master's writes.
   * With no replica counted, or timeoutMs 0, it resolves at once.
   */
  replicated (timeoutMs: number): Promise<void>
  /** Reports a failed command: a refusal to write (OOM, READONLY, MISCONF) turns health to `refusing-writes` at once. */
  noteError (error: unknown): void
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

/** How often the health check asks a Redis that refuses writes whether it takes them again. */
const REFUSING_CHECK_MS = 100

/** Consecutive failed health checks after which a connection that looks open is dropped and reopened. */
const STALE_AFTER_FAILED_CHECKS = 3

/** What the health check writes (with the prefix), so that a Redis refusing writes shows. */
const HEALTH_KEY = 'health'
/** A replica that has not acknowledged for longer than this is not counted in sync (Redis's own lag, seconds). */
const REPLICA_MAX_LAG_S = 3

/** Redis's answers to a write it will not take: out of memory (noeviction), a replica, no disk for its append-only file, too few replicas. */
const WRITE_REFUSED = /^(OOM|READONLY|MISCONF|NOREPLICAS|NOTWRITABLE)\b/

export function isWriteRefused (error: unknown): boolean {
  return error instanceof Error && WRITE_REFUSED.test(error.message)
}

/** Replicas in sync in an `INFO replication` text: `slaveN:...,state=online,...,lag=L` with L small. */
export function replicasInSync (info: string): number {
  let count = 0
  for (const match of info.matchAll(/^slave\d+:(.*)$/gm)) {
    const fields = Object.fromEntries((match[1] ?? '').split(',').map(pair => pair.split('=') as [string, string]))
    if (fields.state === 'online' && Number(fields.lag) <= REPLICA_MAX_LAG_S) count++
  }
  return count
}

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
 * A periodic check (a write, INFO replication) tells a frozen Redis
 * (connected, not answering) and one refusing writes (full, a replica)
 * from a live one, so that the stores stop trying it until it answers again.
 */
export function createRedisConnection (options: RedisConnectionOptions): RedisConnection {
  const { keyPrefix, commandTimeoutMs, log, sentinels } = options
  const url = parseUrl(options.url)
  const retryStrategy = backoff(options.reconnectMaxDelayMs ?? 2000)
  const tls = url.protocol === 'rediss:' ? { ...options.tls } : undefined
  const redisOptions: RedisOptions = {
    keyPrefix,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 2000),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy,
    // RESP2: everything the gateway uses, as ioredis 5 spoke it.
    protocol: 2,
    // The scheme decides, whatever its case (ioredis itself only recognises lower-case `rediss://`).
    ...(tls === undefined ? {} : { tls }),
    // No CLIENT SETINFO on connect: the gateway's Redis user may run no CLIENT command
    // (docs/deployment.md#redis).
    disableClientInfo: true,
    Connector: GuardedConnector,
    ...(sentinels === undefined ? {} : sentinelOptions(sentinels, { tls, commandTimeoutMs, retryStrategy }))
  }
  const client = new Redis(options.url, redisOptions)
  const scripts = createGatewayScripts(client, log)
  let reader: Redis | undefined
  let closed = false
  // A connection on another server than the master the Sentinels announce moves to it (asks
  // them again); one on it already stays (every Sentinel announces the switch), and one
  // connecting is left to it (it asks them anyway; dropped now, ioredis would stop there).
  const follow = (connection: Redis | undefined, address: string | undefined, port: number) => {
    if (connection?.status !== 'ready') return
    const { remoteAddress, remotePort } = connection.stream
    if (remoteAddress === address && remotePort === port) return
    connection.disconnect(true)
  }
  const stopWatching = sentinels === undefined
    ? () => {}
    : watchSentinels(sentinels, { tls, retryStrategy }, (host, port) => {
      // Nodes may announce names (replica-announce-ip): compared as the socket's address.
      const address = isIP(host) === 0
        ? lookup(host).then(found => found.address)
        : Promise.resolve(host)
      address.catch(() => undefined).then((resolved) => {
        if (closed) return
        log.info({ master: `${host}:${port}` }, 'redis: the Sentinels announced a new master')
        follow(client, resolved, port)
        follow(reader, resolved, port)
      }).catch(() => {})
    })
  let current: StoreHealth = 'down'
  let lastError: string | undefined
  const replicaMemoryMs = options.replicaMemoryMs ?? 5000
  let inSync = 0
  let inSyncSince = 0
  const replicaId = randomUUID()
  const listeners = new Set<(health: StoreHealth) => void>()

  function setHealth (next: StoreHealth, reason?: string) {
    if (next === current) return
    current = next
    if (next === 'up') log.info('redis up')
    else if (next === 'down') log.warn({ reason: reason ?? lastError }, 'redis down')
    else log.warn({ reason: reason ?? lastError }, 'redis refusing writes')
    for (const listener of listeners) listener(next)
  }

  // Every error is reported here too, reconnection attempts included: an
  // 'error' without a listener would throw. Messages name the address, never the password.
  function watch (connection: Redis, name: 'commands' | 'reader') {
    connection.on('error', (error: Error) => {
      lastError = error.message
      // A set-up command the user may not run (SELECT of a /db under the
      // gateway's ACL): ioredis goes on without it, on database 0.
      if (error.message.startsWith('NOPERM')) {
        log.error({ connection: name, reason: error.message },
          'redis refused a command of the connection\'s set-up: with the gateway\'s ACL, ' +
          'leave the /db off REDIS_URL (docs/deployment.md#redis)')
      } else log.debug({ connection: name, reason: error.message }, 'redis connection error')
    })
    if (name === 'commands') {
      connection.on('ready', () => {
        // What went wrong before this connection is no reason for a later outage;
        // its server's replicas are its own (after a failover, another master's).
        lastError = undefined
        inSync = 0
        setHealth('up')
        // The function library, loaded when missing (and this user may), or the log says how.
        scripts.ensure().catch(() => {})
      })
      connection.on('close', () => setHealth('down', lastError ?? 'connection closed'))
    }
  }
  watch(client, 'commands')

  // A connection that stays open but stopped answering (a frozen server, a
  // half-open TCP connection) shows in failed checks only; a full or
  // read-only Redis answers PING but refuses a write, so the check writes,
  // and reads the replicas in sync while at it.
  let failedChecks = 0
  async function check (): Promise<StoreHealth> {
    if (client.status !== 'ready') return 'down'
    try {
      const [written, info] = await Promise.all([
        client.set(HEALTH_KEY, replicaId, 'PX', 10_000).then(() => undefined, (error: unknown) => {
          if (isWriteRefused(error)) return error
          throw error
        }),
        client.info('replication')
      ])
      failedChecks = 0
      const count = replicasInSync(info)
      if (count >= inSync || Date.now() - inSyncSince > replicaMemoryMs) {
        inSync = count
        inSyncSince = Date.now()
      }
      if (written === undefined) return 'up'
      lastError = redisReason(written)
      return 'refusing-writes'
    } catch (error) {
      lastError = redisReason(error)
      failedChecks++
      if (failedChecks >= STALE_AFTER_FAILED_CHECKS && !closed) {
        failedChecks = 0
        log.warn({ reason: lastError }, 'redis connection not answering: reconnecting')
        client.disconnect(true)
      }
      return 'down'
    }
  }
  // A Redis that answers but refuses writes (full, or a new master whose replicas are still
  // resynchronising) is checked more often: every store waits for its health to say it
  // takes writes again.
  const intervalMs = options.healthCheckIntervalMs ?? 1000
  let timer: NodeJS.Timeout | undefined
  let checking = false
  const next = () => {
    if (closed) return
    clearTimeout(timer)
    const refusing = current === 'refusing-writes'
    const delay = refusing ? Math.min(intervalMs, REFUSING_CHECK_MS) : intervalMs
    // One check at a time: the next is set once this one is over.
    timer = setTimeout(() => {
      checking = true
      check().then(health => setHealth(health)).finally(() => {
        checking = false
        next()
      })
    }, delay)
    timer.unref()
  }
  next()
  // A store's refused write says so first: checked again soon rather than at the next interval.
  listeners.add((health) => { if (health === 'refusing-writes' && !checking) next() })

  return {
    client,
    scripts,
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
    replicas: () => (current === 'up' ? inSync : 0),
    async replicated (timeoutMs) {
      const replicas = timeoutMs > 0 && current === 'up' ? inSync : 0
      if (replicas === 0) return
      const acked = await client.wait(replicas, timeoutMs).catch(() => 0)
      if (acked < replicas) {
        throw new Error(`${acked} of ${replicas} replicas acknowledged within ${timeoutMs} ms`)
      }
    },
    noteError (error) {
      if (!closed && current === 'up' && isWriteRefused(error)) setHealth('refusing-writes', redisReason(error))
    },
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
      clearTimeout(timer)
      stopWatching()
      listeners.clear()
      current = 'down'
      await Promise.all([end(client, commandTimeoutMs), reader === undefined ? undefined : end(reader, commandTimeoutMs)])
      log.info('redis connections closed')
    }
  }
}

/** ioredis's `reconnectOnError`: 1 (reconnect, the command fails) for a server that turned out to be a replica. */
export function reconnectOnReadOnly (error: Error): 1 | false {
  return error.message.startsWith('READONLY') ? 1 : false
}

/**
 * ioredis's own Sentinel support: the master is asked of the Sentinels, its
 * role checked on every connection, and the connection dropped when the
 * server turns out to be a replica (READONLY: a failover no announcement
 * reached us for); reconnecting asks the Sentinels again. The Sentinels'
 * announcements are followed by watchSentinels, which moves earlier than
 * ioredis's own failoverDetector (`+switch-master` only).
 */
function sentinelOptions (sentinels: RedisSentinels, { tls, commandTimeoutMs, retryStrategy }: { tls: ConnectionOptions | undefined, commandTimeoutMs: number, retryStrategy: (attempt: number) => number }): RedisOptions {
  return {
    sentinels: sentinels.addresses,
    name: sentinels.masterName,
    role: 'master',
    ...(sentinels.username === undefined ? {} : { sentinelUsername: sentinels.username }),
    ...(sentinels.password === undefined ? {} : { sentinelPassword: sentinels.password }),
    ...(tls === undefined ? {} : { enableTLSForSentinelMode: true, sentinelTLS: tls }),
    sentinelCommandTimeout: commandTimeoutMs,
    sentinelRetryStrategy: retryStrategy,
    sentinelReconnectStrategy: retryStrategy,
    failoverDetector: false,
    reconnectOnError: reconnectOnReadOnly,
    Connector: GuardedSentinelConnector
  }
}

/** The master a Sentinel's message announces for `name`: its address, or undefined. */
export function announcedMaster (channel: string, message: string,
  name: string): { host: string, port: number } | undefined {
  const parts = message.split(' ')
  // `+switch-master <name> <old ip> <old port> <new ip> <new port>`
  if (channel === '+switch-master' && parts[0] === name && parts.length === 5) {
    return { host: parts[3]!, port: Number(parts[4]) }
  }
  // `+promoted-slave slave <ip:port> <ip> <port> @ <name> <master ip> <master port>`
  const promoted = parts[0] === 'slave' && parts[4] === '@' && parts[5] === name
  if (channel === '+promoted-slave' && promoted) {
    return { host: parts[2]!, port: Number(parts[3]) }
  }
  return undefined
}

/**
 * Follows a failover as the Sentinels announce it. The leader announces
 * `+promoted-slave` as soon as the replica it chose is a master, and names it
 * as the master from then on; `+switch-master` comes at the end, once every
 * other replica has resynchronised with it, seconds later, and from every
 * Sentinel. On either, `onMaster` is called with the new master's address.
 * One subscriber connection per Sentinel, reconnecting and resubscribing by
 * itself; returns the function that closes them.
 */
function watchSentinels (sentinels: RedisSentinels, options: {
  tls: ConnectionOptions | undefined
  retryStrategy: (attempt: number) => number
}, onMaster: (host: string, port: number) => void): () => void {
  const watchers = sentinels.addresses.map(({ host, port }) => {
    const watcher = new Redis({
      host,
      port,
      ...(sentinels.username === undefined ? {} : { username: sentinels.username }),
      ...(sentinels.password === undefined ? {} : { password: sentinels.password }),
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      retryStrategy: options.retryStrategy,
      enableReadyCheck: false,
      disableClientInfo: true,
      protocol: 2,
      Connector: GuardedConnector
    })
    // Its errors (a Sentinel down) are its own: the command connection reports Redis's health.
    watcher.on('error', () => {})
    watcher.on('message', (channel: string, message: string) => {
      const master = announcedMaster(channel, message, sentinels.masterName)
      if (master !== undefined) onMaster(master.host, master.port)
    })
    watcher.subscribe('+promoted-slave', '+switch-master').catch(() => {})
    return watcher
  })
  return () => { for (const watcher of watchers) watcher.disconnect() }
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
