import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.ts'
import type { Config } from '../config/load.ts'
import { createMemoryEventBus } from './memory/event-bus.ts'
import { createMemoryIdempotencyStore } from './memory/idempotency.ts'
import { createMemoryRateLimitStore } from './memory/rate-limit-store.ts'
import { createMemoryTokenStore } from './memory/token-store.ts'
import type { GatewayState } from './types.ts'

export type { GatewayState } from './types.ts'

export interface StateDeps {
  clock: Clock
  log: FastifyBaseLogger
}

/** Rate-limit keys (clients and addresses) this process counts at most; the least recently seen go first. */
const RATE_LIMIT_KEYS = 10_000

/**
 * The one place the gateway's state is chosen from configuration. Today it
 * is all in this process's memory: one instance. (Replicas will share it in
 * Redis, state/redis/, chosen here when REDIS_URL is set.)
 */
export function createState (config: Pick<Config, 'IDEMPOTENCY_TTL_SECONDS' | 'IDEMPOTENCY_MAX_ENTRIES'>, { clock, log }: StateDeps): GatewayState {
  const events = createMemoryEventBus({ log })
  return {
    idempotency: createMemoryIdempotencyStore({ ttlMs: config.IDEMPOTENCY_TTL_SECONDS * 1000, maxEntries: config.IDEMPOTENCY_MAX_ENTRIES, clock }),
    rateLimitStore: createMemoryRateLimitStore({ cache: RATE_LIMIT_KEYS }),
    events,
    tokens: createMemoryTokenStore({ clock }),
    close: () => events.close()
  }
}
