import type { RouteScope } from '../catalogue/scopes.ts'
import type { OperationId } from '../catalogue/operations.ts'

/**
 * The route schema's extension marking a body that may be left out (the
 * finalization's): the OpenAPI document says it is not required (plugins/swagger.ts).
 */
export const OPTIONAL_BODY = 'x-optional-body'

/** A write: audited, and idempotent with an `Idempotency-Key`. */
export interface WriteRoute {
  /** The hub operation it calls, named in audit lines. */
  operation: OperationId
  /** The path parameter naming the document written to. */
  idParam: 'bookingRequestId' | 'sp2Id'
}

declare module 'fastify' {
  /**
   * What a route declares about itself, in its `config`. The plugins read it
   * as the route is registered (auth: the scope check, its OpenAPI security
   * and answers; audit and idempotency: the writes) or as it is called (the
   * rate limiter: public routes).
   */
  interface FastifyContextConfig {
    /**
     * The scope a client needs (catalogue/scopes.ts), or the scopes, all of which
     * it needs (a route whose answer mixes customs and SP2 data); null for a public route: no
     * key needed and not rate limited (health, metrics, docs). A route under
     * /v1 without one stops start-up, so that no route goes unprotected by
     * forgetting it.
     */
    scope?: RouteScope | null
    /** Set on the writes. */
    write?: WriteRoute
    /**
     * The hub operations the route calls. Not in the public document (it
     * speaks to web developers); docs/reference/hub-operations.md, for operators, is
     * generated from it.
     */
    hubOperations?: readonly OperationId[]
  }
}
