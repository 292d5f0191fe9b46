import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { createCredentials } from '../credentials/index.ts'
import type { ProfileInForce } from '../profile/resolve.ts'
import { createHubClient, type HubClient } from '../upstream/client.ts'

declare module 'fastify' {
  interface FastifyInstance {
    hub: HubClient
  }
}

/**
 * The hub client: the hub profile in force (resolved by the app, as the
 * state needs it too), one undici pool per upstream address, closed with
 * the app.
 */
async function hub (
  app: FastifyInstance,
  {
    config,
    profile,
    version,
    clock
  }: { config: GatewayConfig; profile: ProfileInForce; version: string; clock: Clock }
) {
  // One short line at info; the whole profile at debug (it holds header names and addresses, never
  // a key or token); `npm run profile` prints it too.
  app.log.info(
    { profile: profile.name, source: profile.source, digest: profile.digest },
    `hub profile in force: ${profile.name} (${profile.source}), digest ${profile.digest}`
  )
  app.log.debug({ profile: profile.document }, 'hub profile in force, whole')
  const client = createHubClient({
    config,
    profile,
    credentials: createCredentials(config, profile, {
      log: app.log,
      tokens: app.state.tokens,
      clock,
      onLogin: (outcome) => app.metrics.countLogin(outcome),
      onRefresh: (outcome) => app.metrics.countRefresh(outcome)
    }),
    userAgent: `customs-gateway/${version}`,
    observe: (operation, outcome, seconds) =>
      app.metrics.observeUpstream(operation, outcome, seconds),
    onSlowPath: (operation) => app.metrics.countSlowPath(operation),
    onDrift: (operation, kind) => app.metrics.countDrift(operation, kind),
    // This process's memory of lookups and, with REDIS_URL, the replicas' shared tier behind it.
    lookupStore: app.state.lookupStore,
    lookupTier: app.state.lookupTier,
    clock
  })
  app.decorate('hub', client)
  app.addHook('onClose', async () => client.close())
}

export default fp(hub, { name: 'hub', dependencies: ['metrics', 'state'] })
