import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { createCredentials } from '../credentials/index.ts'
import { createHubClient, type HubClient } from '../upstream/client.ts'

declare module 'fastify' {
  interface FastifyInstance {
    hub: HubClient
  }
}

/** The hub client: one undici pool per upstream address, closed with the app. */
async function hub (app: FastifyInstance, { config, version, clock }: { config: GatewayConfig, version: string, clock: Clock }) {
  const client = createHubClient({
    config,
    credentials: createCredentials(config, { log: app.log, tokens: app.state.tokens, clock, onLogin: (outcome) => app.metrics.countLogin(outcome), onRefresh: (outcome) => app.metrics.countRefresh(outcome) }),
    userAgent: `customs-gateway/${version}`,
    observe: (operation, outcome, seconds) => app.metrics.observeUpstream(operation, outcome, seconds),
    onSlowPath: (operation) => app.metrics.countSlowPath(operation),
    // With REDIS_URL, the replicas' shared tier behind this process's memory cache.
    lookupTier: app.state.lookupTier,
    clock
  })
  app.decorate('hub', client)
  app.addHook('onClose', async () => client.close())
}

export default fp(hub, { name: 'hub', dependencies: ['metrics', 'state'] })
