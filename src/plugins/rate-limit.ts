import fp from 'fastify-plugin'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/resolve.ts'
import { parseDuration } from '../config/duration.ts'
import { gatewayError } from '../errors.ts'

/**
 * @fastify/rate-limit, keyed by client (by address when the caller is not
 * authenticated, so that key guessing is limited too; IPv6 by /64), with each client's
 * limit from the clients file and RATE_LIMIT_MAX per RATE_LIMIT_WINDOW
 * otherwise. Public routes (`config.scope` null: health, metrics, docs) are
 * not limited; unknown routes are (the not-found handler in
 * plugins/error-handler.ts).
 * The 429 is our RATE_LIMITED error, rendered by the one error handler, with
 * `retry-after` and the `x-ratelimit-*` headers the plugin sets. The counts
 * are kept in the state's rate-limit store (state/).
 */
async function rateLimits (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  const windowMs = parseDuration(config.RATE_LIMIT_WINDOW) ?? 60_000

  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: (request) => request.client?.rateLimit.max ?? config.RATE_LIMIT_MAX,
    timeWindow: (request) => request.client?.rateLimit.timeWindowMs ?? windowMs,
    keyGenerator: (request) =>
      request.client === null
        ? `address:${normalizeIP(request.ip)}`
        : `client:${request.client.name}`,
    // Read as the request comes, not as the route is added: Swagger UI's routes are
    // declared public after the plugin's own onRoute hook has run (plugins/swagger.ts).
    allowList: (request) => request.routeOptions.config.scope === null,
    store: app.state.rateLimitStore,
    errorResponseBuilder: (_request, context) =>
      gatewayError('RATE_LIMITED', {
        retryAfter: String(Math.max(1, Math.ceil(context.ttl / 1000)))
      })
  })
}

export default fp(rateLimits, { name: 'rate-limit', dependencies: ['clients', 'state'] })
