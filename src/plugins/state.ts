import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { createState } from '../state/index.ts'
import type { GatewayState } from '../state/types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's state behind its interfaces (state/types.ts): idempotency, rate-limit counts, events, the hub session. */
    state: GatewayState
  }
}

/** The state, as createState chooses it from configuration, closed with the app. */
async function state (app: FastifyInstance, { config, clock }: { config: GatewayConfig, clock: Clock }) {
  const chosen = createState(config, { clock, log: app.log })
  app.decorate('state', chosen)
  app.addHook('onClose', async () => chosen.close())
}

export default fp(state, { name: 'state' })
