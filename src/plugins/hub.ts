import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { createCredentials } from '../credentials/index.ts'
import { resolveProfile } from '../profile/resolve.ts'
import { createHubClient, type HubClient } from '../upstream/client.ts'

declare module 'fastify' {
  interface FastifyInstance {
    hub: HubClient
  }
}

/**
 * The hub client: the hub profile in force (UPSTREAM_PROFILE_FILE over the
 * settings; a problem in it stops start-up), one undici pool per upstream
 * address, closed with the app.
 */
async function hub (app: FastifyInstance, { config, version, clock }: { config: GatewayConfig, version: string, clock: Clock }) {
  const profile = resolveProfile(config)
  // The whole profile in force, once: it holds header names and addresses, never a key or token.
  app.log.info({ profile: profile.document, source: profile.source, digest: profile.digest }, `hub profile in force: ${profile.name} (${profile.source})`)
  // The login reads its answer's fields and its token's scheme from the profile in force.
  const login = { ...config, UPSTREAM_LOGIN_TOKEN_FIELD: profile.login.tokenField, UPSTREAM_LOGIN_EXPIRES_FIELD: profile.login.expiresField, UPSTREAM_LOGIN_TOKEN_SCHEME: profile.tokenScheme }
  const client = createHubClient({
    config,
    profile,
    credentials: createCredentials(login, { log: app.log, tokens: app.state.tokens, clock, onLogin: (outcome) => app.metrics.countLogin(outcome), onRefresh: (outcome) => app.metrics.countRefresh(outcome) }),
    userAgent: `customs-gateway/${version}`,
    observe: (operation, outcome, seconds) => app.metrics.observeUpstream(operation, outcome, seconds),
    onSlowPath: (operation) => app.metrics.countSlowPath(operation),
    onDrift: (operation, kind) => app.metrics.countDrift(operation, kind),
    // With REDIS_URL, the replicas' shared tier behind this process's memory cache.
    lookupTier: app.state.lookupTier,
    clock
  })
  app.decorate('hub', client)
  app.addHook('onClose', async () => client.close())
}

export default fp(hub, { name: 'hub', dependencies: ['metrics', 'state'] })
