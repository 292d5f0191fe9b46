import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.ts'
import type { Config } from '../config/load.ts'
import { createMemoryEventBus } from './memory/event-bus.ts'
import { createMemoryIdempotencyStore } from './memory/idempotency.ts'
import { createMemoryRateLimitStore } from './memory/rate-limit-store.ts'
import { createMemoryTokenStore } from './memory/token-store.ts'
import { createRedisConnection } from './redis/connection.ts'
import { createRedisEventBus } from './redis/event-bus.ts'
import { createRedisIdempotencyStore } from './redis/idempotency.ts'
import { createRedisLookupTier } from './redis/lookup-tier.ts'
import { createRedisRateLimitStore } from './redis/rate-limit-store.ts'
import { createRedisTokenStore } from './redis/token-store.ts'
import type { GatewayState } from './types.ts'

export type { GatewayState } from './types.ts'

export interface StateDeps {
  clock: Clock
  log: FastifyBaseLogger
}

/** The settings createState reads. */
export type StateConfig = Pick<Config,
  | 'IDEMPOTENCY_TTL_SECONDS' | 'IDEMPOTENCY_MAX_ENTRIES'
  | 'REDIS_URL' | 'REDIS_KEY_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'
  | 'UPSTREAM_DEADLINE_MS' | 'UPSTREAM_HEADERS_TIMEOUT_MS'>

/** Rate-limit keys (clients and addresses) this process counts at most; the least recently seen go first. */
const RATE_LIMIT_KEYS = 10_000

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

/**
 * The one place the gateway's state is chosen from configuration: without
 * REDIS_URL, this process's memory (one instance); with it, Redis, shared by
 * every replica, over one connection set per process (state/redis/,
 * docs/redis.md), closed with the state.
 */
export function createState (config: StateConfig, { clock, log }: StateDeps): GatewayState {
  if (config.REDIS_URL === undefined) {
    const events = createMemoryEventBus({ log })
    return {
      idempotency: createMemoryIdempotencyStore({ ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000, maxEntries: config.IDEMPOTENCY_MAX_ENTRIES, clock }),
      rateLimitStore: createMemoryRateLimitStore({ cache: RATE_LIMIT_KEYS }),
      events,
      tokens: createMemoryTokenStore({ clock }),
      close: () => events.close()
    }
  }

  const connection = createRedisConnection({
    url: config.REDIS_URL,
    keyPrefix: config.REDIS_KEY_PREFIX,
    commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    log: log.child({ component: 'redis' })
  })
  const events = createRedisEventBus({ connection })
  return {
    idempotency: createRedisIdempotencyStore({
      connection,
      ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000,
      claimTtlMs: config.UPSTREAM_DEADLINE_MS + CLAIM_MARGIN_MS
    }),
    rateLimitStore: createRedisRateLimitStore(connection, { cache: RATE_LIMIT_KEYS }),
    events,
    // A login gets the headers timeout for each of its connect, headers and body (credentials/login.ts).
    tokens: createRedisTokenStore({ connection, lockTtlMs: 3 * config.UPSTREAM_HEADERS_TIMEOUT_MS + 1000, now: clock }),
    lookupTier: createRedisLookupTier({ connection, maxEntryBytes: SHARED_LOOKUP_MAX_BYTES, now: clock }),
    redis: { health: () => connection.health(), whenUp: (timeoutMs) => connection.whenUp(timeoutMs) },
    async close () {
      await events.close()
      await connection.close()
    }
  }
}
