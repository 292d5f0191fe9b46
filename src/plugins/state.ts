import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { createState, type StateDeps } from '../state/index.ts'
import type { GatewayState } from '../state/types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's state behind its interfaces (state/types.ts): idempotency, rate-limit counts, events, the hub session. */
    state: GatewayState
  }
}

/**
 * How long start-up waits for Redis (REDIS_URL set) before going on without
 * it: long enough for a reachable Redis to answer, so that the first writes
 * are not refused; short, because a Redis outage must not keep replicas from
 * starting (they degrade as docs/operations.md#when-redis-fails says, and recover by
 * themselves).
 */
const REDIS_STARTUP_WAIT_MS = 3000

interface StateOptions extends Pick<StateDeps, 'loginRefreshes' | 'loginTimeoutMs'> {
  config: GatewayConfig
  clock: Clock
}

/** The state, as createState chooses it from configuration, closed with the app. */
async function state (app: FastifyInstance, { config, clock, ...login }: StateOptions) {
  const chosen = await createState(config, { clock, log: app.log, ...login })
  app.decorate('state', chosen)
  app.addHook('onClose', async () => chosen.close())
  if (chosen.redis !== undefined && !await chosen.redis.whenUp(REDIS_STARTUP_WAIT_MS)) {
    app.log.warn(`redis: not reachable within ${REDIS_STARTUP_WAIT_MS} ms of start-up; ` +
      'serving without it until it answers (docs/operations.md#when-redis-fails)')
  }
}

export default fp(state, { name: 'state' })
