/**
 * The scopes a client may hold (docs/api.md#scopes-and-limits). Each route declares the one
 * it needs in its own options (`config.scope`, routes/route-config.ts); the
 * auth plugin reads that declaration as the route is registered.
 */

export const SCOPES = [
  'customs:read',
  'sp2:read',
  'sp2:finalize',
  'bookings:write',
  'events:read'
] as const
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

/**
 * What a route declares (`config.scope`): one scope, or several when its
 * answer mixes data of several (GET /v1/shipments/{blNo}: customs and SP2),
 * which a client must then hold all of.
 */
export type RouteScope = Scope | readonly Scope[]

/** The scopes a route's declaration names, in order. */
export function scopesOf (scope: RouteScope): readonly Scope[] {
  return typeof scope === 'string' ? [scope] : scope
}

/**
 * Routes under /v1 must declare a scope (null for a public one); others (health, docs, CORS
 * preflight) need not.
 */
export function needsScope (url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/')
}
