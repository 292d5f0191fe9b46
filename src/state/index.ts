import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.ts'
import type { Config } from '../config/load.ts'
import { createMemoryEventLog } from './memory/event-log.ts'
import { createMemoryIdempotencyStore } from './memory/idempotency.ts'
import { createMemoryLookupStore } from './memory/lookup-cache.ts'
import { createMemoryRateLimitStore } from './memory/rate-limit-store.ts'
import { createMemoryTicketStore } from './memory/ticket-store.ts'
import { createMemoryTokenStore } from './memory/token-store.ts'
import type { GatewayState, LookupBudget, LookupStore } from './types.ts'

export type { GatewayState } from './types.ts'

export interface StateDeps {
  clock: Clock
  log: FastifyBaseLogger
  /** Login mode renews the hub session by its refresh token (a renewal address is known): the session lock outlasts a refused refresh and a login. */
  loginRefreshes?: boolean
  /** How long each step of a login may take: the session lock outlasts a login. */
  loginTimeoutMs: number
}

/** The settings createState reads. */
export type StateConfig = Pick<Config,
  | 'IDEMPOTENCY_TTL_SECONDS' | 'IDEMPOTENCY_MAX_ENTRIES'
  | 'REDIS_URL' | 'REDIS_KEY_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'
  | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_MASTER_NAME' | 'REDIS_SENTINEL_USERNAME' | 'REDIS_SENTINEL_PASSWORD' | 'REDIS_REPLICA_ACK_TIMEOUT_MS'
  | 'UPSTREAM_DEADLINE_MS'
  | 'EVENTS_REPLAY_SECONDS' | 'EVENTS_REPLAY_MAX'>

/** Rate-limit keys (clients and addresses) this process counts at most; the least recently seen go first. */
const RATE_LIMIT_KEYS = 10_000

/**
 * The one place the gateway's state is chosen from configuration: without
 * REDIS_URL, this process's memory (one instance); with it, Redis, shared by
 * every replica, over one connection set per process (state/redis/,
 * docs/deployment.md#redis), closed with the state.
 */
export async function createState (config: StateConfig, deps: StateDeps): Promise<GatewayState> {
  const { clock, log, loginRefreshes = false, loginTimeoutMs } = deps
  const url = config.REDIS_URL
  // A replica's own memory of lookups, whatever the state: in front of the shared tier, if any.
  const lookupStore = <T>(budget: LookupBudget): LookupStore<T> =>
    createMemoryLookupStore<T>({ ...budget, clock })
  if (url === undefined) {
    const events = createMemoryEventLog({ log, clock, windowMs: config.EVENTS_REPLAY_SECONDS * 1000, maxEntries: config.EVENTS_REPLAY_MAX })
    return {
      idempotency: createMemoryIdempotencyStore({ ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000, maxEntries: config.IDEMPOTENCY_MAX_ENTRIES, clock }),
      rateLimitStore: createMemoryRateLimitStore({ cache: RATE_LIMIT_KEYS }),
      events,
      tickets: createMemoryTicketStore({ clock }),
      tokens: createMemoryTokenStore({ clock }),
      lookupStore,
      close: () => events.close()
    }
  }

  // Loaded only when configured: ioredis and its command table hold about
  // 1.3 MB of heap (measured in the built gateway) a single instance would
  // otherwise keep for nothing.
  const { createRedisState } = await import('./redis/index.ts')
  const redisDeps = { log, clock, rateLimitKeys: RATE_LIMIT_KEYS, loginRefreshes, loginTimeoutMs }
  return { ...createRedisState({ ...config, REDIS_URL: url }, redisDeps), lookupStore }
}
