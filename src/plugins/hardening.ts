import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/resolve.ts'
import { parseJsonBody } from './json-body.ts'

/** Request headers a browser may send cross-origin, and response headers it may read. */
const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'x-request-id',
  'cache-control',
  'if-none-match',
  'x-upstream-authorization'
]
const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'idempotent-replayed',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'etag',
  'age'
]

export function corsOrigins (config: Pick<GatewayConfig, 'CORS_ORIGINS'>): string[] {
  return (config.CORS_ORIGINS ?? '').split(',').map(o => o.trim()).filter(o => o !== '')
}

/**
 * Response headers and what the gateway accepts:
 * - helmet's headers, with its default Content-Security-Policy, which Swagger
 *   UI at /docs satisfies (its page loads only its own scripts and styles from
 *   /docs/static; @fastify/swagger-ui 6 has no inline script), minus
 *   `upgrade-insecure-requests`, which would break /docs on a plain-HTTP
 *   internal address by sending its assets and "Try it out" calls to https;
 * - CORS for the origins of CORS_ORIGINS only; none at all when it is unset;
 * - JSON only: the text/plain parser Fastify adds is removed, so a POST body of
 *   any other type is 415 UNSUPPORTED_MEDIA_TYPE; JSON is read by
 *   parseJsonBody (json-body.ts), which names a refused `__proto__` or
 *   `constructor.prototype` key. (Body size: Fastify's bodyLimit in app.ts.)
 */
async function hardening (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  const headers = helmetHeaders({
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } }
  })
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
  const origins = corsOrigins(config)
  if (origins.length > 0) {
    await app.register(cors, {
      origin: origins,
      methods: ['GET', 'POST'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      credentials: false,
      maxAge: 600,
      strictPreflight: true
    })
  }
  app.removeContentTypeParser('text/plain')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody)
}

/**
 * helmet's headers for these options, computed once. They depend on nothing
 * in the request (no CSP nonces are used), and @fastify/helmet runs helmet
 * anew on every request, re-parsing the CSP directives each time: measured,
 * 4 % of the gateway's CPU per lookup. helmet itself still decides every header.
 */
export function helmetHeaders (options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader (name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value)
    },
    removeHeader (name: string) {
      delete headers[name.toLowerCase()]
    }
  }
  let done = false
  helmet(options)(
    {} as IncomingMessage,
    response as unknown as ServerResponse,
    (error?: unknown) => {
      if (error !== undefined && error !== null) throw error
      done = true
    }
  )
  if (!done) throw new Error('helmet did not finish synchronously')
  return headers
}

export default fp(hardening, { name: 'hardening' })
