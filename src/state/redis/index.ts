/**
 * The gateway's state in Redis, shared by every replica, over one connection
 * set per process (docs/deployment.md#redis), closed with the state. Loaded by
 * createState (state/index.ts) only when REDIS_URL is set.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.ts'
import { sentinelAddresses, type Config } from '../../config/load.ts'
import type { GatewayState } from '../types.ts'
import { createRedisConnection, type RedisSentinels } from './connection.ts'
import { createRedisEventLog } from './event-log.ts'
import { createRedisIdempotencyStore } from './idempotency.ts'
import { createRedisLookupTier } from './lookup-tier.ts'
import { createRedisRateLimitStore } from './rate-limit-store.ts'
import { createRedisTicketStore } from './ticket-store.ts'
import { createRedisTokenStore } from './token-store.ts'

/**
 * Lookup answers larger than this are not put in Redis (each replica's memory
 * tier still keeps them): one such value would hold the command connection,
 * which every request shares, for longer than a lookup saves.
 */
const SHARED_LOOKUP_MAX_BYTES = 4 * 1024 * 1024

/**
 * What an idempotency claim outlives the request deadline by: the time the
 * gateway needs around the hub call (validation, the answer's encoding) and
 * clocks a little apart. A replica that dies mid-write holds the key this
 * long at most.
 */
const CLAIM_MARGIN_MS = 5000

/** The settings the Redis state reads. */
type RedisStateConfig = Pick<Config,
  'IDEMPOTENCY_TTL_SECONDS' | 'REDIS_KEY_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS' |
  'UPSTREAM_DEADLINE_MS' |
  'EVENTS_REPLAY_SECONDS' | 'EVENTS_REPLAY_MAX' |
  'REDIS_SENTINELS' | 'REDIS_SENTINEL_MASTER_NAME' | 'REDIS_SENTINEL_USERNAME' | 'REDIS_SENTINEL_PASSWORD' | 'REDIS_REPLICA_ACK_TIMEOUT_MS'> & { REDIS_URL: string }

interface RedisStateDeps {
  clock: Clock
  log: FastifyBaseLogger
  rateLimitKeys: number
  loginRefreshes: boolean
  /** How long each step of a login may take (the hub profile's headers timeout of `defaults`). */
  loginTimeoutMs: number
}

/** The Sentinels to ask for the master (REDIS_SENTINELS), with their password (REDIS_SENTINEL_PASSWORD, or its file, read by the config loader). */
function sentinelsOf (config: RedisStateConfig): RedisSentinels | undefined {
  if (config.REDIS_SENTINELS === undefined) return undefined
  const password = config.REDIS_SENTINEL_PASSWORD
  return {
    addresses: sentinelAddresses(config.REDIS_SENTINELS),
    masterName: config.REDIS_SENTINEL_MASTER_NAME,
    ...(config.REDIS_SENTINEL_USERNAME === undefined ? {} : { username: config.REDIS_SENTINEL_USERNAME }),
    ...(password === undefined ? {} : { password })
  }
}

/** The state in Redis; createState adds the replica's own memory of lookups. */
export function createRedisState (
  config: RedisStateConfig,
  deps: RedisStateDeps
): Omit<GatewayState, 'lookupStore'> {
  const { clock, log, rateLimitKeys, loginRefreshes, loginTimeoutMs } = deps
  const sentinels = sentinelsOf(config)
  const redisLog = log.child({ component: 'redis' })
  const connection = createRedisConnection({
    url: config.REDIS_URL,
    keyPrefix: config.REDIS_KEY_PREFIX,
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    log: redisLog,
    ...(sentinels === undefined ? {} : { sentinels })
  })
  const events = createRedisEventLog({
    connection,
    clock,
    windowMs: config.EVENTS_REPLAY_SECONDS * 1000,
    maxEntries: config.EVENTS_REPLAY_MAX,
    replicaAckTimeoutMs: config.REDIS_REPLICA_ACK_TIMEOUT_MS
  })
  const idempotency = createRedisIdempotencyStore({
    connection,
    ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000,
    claimTtlMs: config.UPSTREAM_DEADLINE_MS + CLAIM_MARGIN_MS,
    replicaAckTimeoutMs: config.REDIS_REPLICA_ACK_TIMEOUT_MS
  })
  return {
    idempotency,
    rateLimitStore: createRedisRateLimitStore(connection, { cache: rateLimitKeys }),
    events,
    tickets: createRedisTicketStore({ connection }),
    // A login gets the headers timeout for each of its connect, headers and body (credentials/login.ts);
    // with a refresh address, a renewal may be a refresh the hub refuses and then a login.
    tokens: createRedisTokenStore({
      connection,
      lockTtlMs: (loginRefreshes ? 2 : 1) * 3 * loginTimeoutMs + 1000,
      now: clock
    }),
    lookupTier: createRedisLookupTier({ connection, maxEntryBytes: SHARED_LOOKUP_MAX_BYTES, now: clock }),
    redis: { health: () => connection.health(), whenUp: (timeoutMs) => connection.whenUp(timeoutMs) },
    async close () {
      await events.close()
      // Reported, never dropped in silence: their keys answer OUTCOME_UNKNOWN once their lease passes.
      const unsettled = idempotency.pending()
      if (unsettled > 0) redisLog.error({ unsettled }, 'idempotency: closing with outcomes Redis has not taken yet; their keys answer OUTCOME_UNKNOWN')
      await connection.close()
    }
  }
}
