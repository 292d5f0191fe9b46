import type { OperationId } from '../upstream/operations.ts'

/**
 * Who may call what, as data (contract.md 3b). The auth plugin reads this
 * table for every route as it is registered: it attaches the scope check,
 * the OpenAPI security requirement and the 401/403/429 answers; the
 * rate limiter, the idempotency store and the audit log read it too.
 * A route under /v1 that no rule covers stops start-up, so that a new route
 * cannot go unprotected by forgetting a line here.
 */

export const SCOPES = ['customs:read', 'sp2:read', 'sp2:finalize', 'bookings:write', 'events:read'] as const
export type Scope = (typeof SCOPES)[number]

/** The OpenAPI security scheme every scoped route refers to (declared in plugins/swagger.ts). */
export const SECURITY_SCHEME = 'bearerAuth'

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'customs:read': 'Customs lookups: everything under /v1/customs and /v1/taxpayers',
  'sp2:read': 'SP2 document and container lookups',
  'sp2:finalize': 'Finalizing an SP2 document',
  'bookings:write': 'Posting booking offers and booked notifications',
  'events:read': 'The booked notifications WebSocket'
}

/** A write: audited, and idempotent with an `Idempotency-Key`. */
export interface WriteRoute {
  /** The hub operation it calls, named in audit lines. */
  operation: OperationId
  /** The path parameter naming the document written to. */
  idParam: 'bookingRequestId' | 'sp2Id'
}

export interface RouteAccess {
  /** The scope a client needs; null for a public route (no key needed). */
  scope: Scope | null
  /** False for the routes load balancers and people poll: health, metrics, docs. */
  rateLimited: boolean
  write?: WriteRoute
}

export interface AccessRule {
  method: 'GET' | 'POST'
  /** A route pattern as Fastify writes it; a trailing `/*` covers every route below. */
  url: string
  access: RouteAccess
}

const read = (scope: Scope): RouteAccess => ({ scope, rateLimited: true })
const write = (scope: Scope, operation: OperationId, idParam: WriteRoute['idParam']): RouteAccess => ({ scope, rateLimited: true, write: { operation, idParam } })
const open: RouteAccess = { scope: null, rateLimited: false }

export const ACCESS_RULES: readonly AccessRule[] = [
  { method: 'GET', url: '/v1/customs/*', access: read('customs:read') },
  { method: 'GET', url: '/v1/taxpayers/*', access: read('customs:read') },
  { method: 'GET', url: '/v1/sp2/documents', access: read('sp2:read') },
  { method: 'GET', url: '/v1/sp2/containers', access: read('sp2:read') },
  { method: 'POST', url: '/v1/sp2/documents/:sp2Id/finalization', access: write('sp2:finalize', 'document_sp2/final', 'sp2Id') },
  { method: 'POST', url: '/v1/bookings/:bookingRequestId/offers', access: write('bookings:write', 'DetilBooking', 'bookingRequestId') },
  { method: 'POST', url: '/v1/bookings/:bookingRequestId/booked', access: write('bookings:write', 'DetilBooking/isBooked', 'bookingRequestId') },
  { method: 'GET', url: '/v1/events', access: read('events:read') },
  { method: 'GET', url: '/health/live', access: open },
  { method: 'GET', url: '/health/ready', access: open },
  { method: 'GET', url: '/metrics', access: open },
  { method: 'GET', url: '/openapi.json', access: open },
  { method: 'GET', url: '/docs', access: open },
  { method: 'GET', url: '/docs/*', access: open }
]

function matches (rule: AccessRule, url: string): boolean {
  return rule.url.endsWith('/*') ? url.startsWith(rule.url.slice(0, -1)) : url === rule.url
}

/**
 * The access rule of a route, by method and URL pattern (HEAD is GET's).
 * Undefined when no rule covers it: see `needsRule`.
 */
export function accessFor (method: string, url: string): RouteAccess | undefined {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase()
  return ACCESS_RULES.find(rule => rule.method === m && matches(rule, url))?.access
}

/** Routes under /v1 must have a rule; others (health, docs, CORS preflight) are public. */
export function needsRule (url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/')
}
