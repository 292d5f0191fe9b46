import fp from 'fastify-plugin'
import type {
  FastifyInstance,
  FastifyRequest,
  FastifyReply,
  FastifySchema,
  HookHandlerDoneFunction,
  onRequestHookHandler,
  RouteOptions
} from 'fastify'
import { presentedKey } from '../auth/clients.ts'
import { needsScope, scopesOf, SECURITY_SCHEME, type Scope } from '../catalogue/scopes.ts'
import { gatewayError } from '../errors.ts'
import { errorResponses } from '../schemas/envelope.ts'

const REALM = 'Bearer realm="customs-gateway"'

/** The route schema, documented with its scopes and the answers the checks add. */
function withScope (
  schema: FastifySchema | undefined,
  scopes: readonly Scope[],
  url: string
): FastifySchema {
  const how =
    url === '/v1/events'
      ? 'send `Authorization: Bearer <client key>`, or from a browser offer the subprotocols ' +
        "`bearer` and the key (`new WebSocket(url, ['bearer', key])`)"
      : 'send `Authorization: Bearer <client key>`'
  const needs =
    scopes.length === 1
      ? `**Scope:** \`${scopes[0]}\` (${how}). Without a known key: 401 UNAUTHORIZED; without ` +
        'the scope: 403 FORBIDDEN'
      : `**Scopes:** ${scopes.map((scope) => `\`${scope}\``).join(' and ')}, all of them ` +
        `(${how}). Without a known key: 401 UNAUTHORIZED; without one of the scopes: 403 ` +
        'FORBIDDEN naming it'
  const description = `${schema?.description ?? ''}\n\n${needs}; over the client's rate limit: ` +
    '429 RATE_LIMITED.'
  return {
    ...schema,
    description: description.trim(),
    // One requirement listing several scopes: OpenAPI reads it as all of them.
    security: [{ [SECURITY_SCHEME]: [...scopes] }],
    response: {
      ...(schema?.response as Record<number, unknown> | undefined),
      ...errorResponses([401, 403, 429])
    }
  }
}

/**
 * Caller authentication and scopes. Every route declares the scope it needs
 * in its options (`config.scope`, routes/route-config.ts), read here as it is
 * registered: a /v1 route without one stops start-up; a route with a scope
 * gets the scope check, the OpenAPI security requirement and its 401/403/429
 * answers. The check runs in onRequest after the rate limiter (registered
 * before this plugin), so that callers guessing keys are limited too, and
 * before the body is read.
 */
async function auth (app: FastifyInstance) {
  const enabled = app.clients !== null

  // A callback hook: it runs on every request and nearly always passes, and an async one costs a
  // promise each time.
  function requireScope (scopes: readonly Scope[]): onRequestHookHandler {
    return function requireScope (
      request: FastifyRequest,
      reply: FastifyReply,
      done: HookHandlerDoneFunction
    ) {
      const client = request.client
      if (client === null) {
        reply.header('www-authenticate', REALM)
        request.log.info(
          { reason: presentedKey(request.headers) === undefined ? 'no key' : 'unknown key' },
          'caller not authenticated'
        )
        done(gatewayError('UNAUTHORIZED'))
        return
      }
      let scope: Scope | undefined
      for (const needed of scopes) {
        if (!client.scopes.includes(needed)) {
          scope = needed
          break
        }
      }
      if (scope !== undefined) {
        reply.header('www-authenticate', `${REALM}, error="insufficient_scope", scope="${scope}"`)
        request.log.info({ client: client.name, scope }, 'client lacks the scope')
        done(gatewayError('FORBIDDEN', {}, scope))
        return
      }
      done()
    }
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    const scope = route.config?.scope
    if (scope === undefined) {
      if (needsScope(route.url)) {
        throw new Error(
          `${[route.method].flat().join(',')} ${route.url} has no access rule: declare the scope ` +
          'it needs in its options, config.scope (null for a public route); every /v1 route ' +
          'needs one'
        )
      }
      return
    }
    if (scope === null) return
    // New objects, never mutated: Fastify's automatic HEAD route shares the GET route's originals.
    const scopes = scopesOf(scope)
    route.schema = withScope(route.schema, scopes, route.url)
    if (enabled) route.onRequest = [...[route.onRequest ?? []].flat(), requireScope(scopes)]
  })
}

export default fp(auth, { name: 'auth', dependencies: ['clients', 'rate-limit'] })
