import type { FastifyInstance, FastifyReply, FastifyRequest, RawRequestDefaultExpression, RawServerDefault, RouteGenericInterface, RouteShorthandOptions } from 'fastify'
import { operationOf, type OperationId } from '../catalogue/operations.ts'
import { gatewayError } from '../errors.ts'
import { hubMayHaveActed } from '../upstream/failures.ts'
import { errorResponses, recordEnvelope, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import type { TSchema, TypeBoxTypeProvider } from '../typebox.ts'

/** What a write may answer besides 200: the hub's failures, a body too large or not JSON. */
const WRITE_ERRORS = errorResponses([...UPSTREAM_STATUSES, 413, 415])

/** A write's request as the type provider types it from the route's params and body schemas. */
export type WriteRequest<P extends TSchema, B extends TSchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, { params: P, body: B }, TypeBoxTypeProvider>

/**
 * Sends the write's hub operation what it is given; resolves with the hub's
 * answer data (already in our names). `params` holds the route's path
 * parameter, which a hub profile may place in the hub's address.
 */
export type HubWrite = (sent: { params: Record<string, string>, body: unknown }) => Promise<unknown>

export interface WriteRouteOptions<P extends TSchema, B extends TSchema> {
  /** The hub operation; its catalogue entry gives the route's path, scope, words and answer. */
  operation: OperationId
  params: P
  body: B
  /** Further schema keys, such as the OpenAPI extension of an optional body. */
  schema?: Record<string, unknown>
  preValidation?: RouteShorthandOptions['preValidation']
  /**
   * The write itself: sends the hub its request through `hub`, and returns
   * the answer's data, the write in the API's words (mapping/request-bodies.ts
   * writeAnswer).
   */
  handler (request: WriteRequest<P, B>, hub: HubWrite): Promise<Record<string, unknown>>
}

/**
 * A POST route that makes one hub write, as the lookups have registerLookup:
 * its catalogue entry gives its path, scope and words; it declares that it
 * is a write (audited, idempotent with an `Idempotency-Key`), its schemas and
 * the errors a write may answer, and is never cached (`cache-control:
 * no-store`). Writes are never retried.
 */
export function registerWrite<P extends TSchema, B extends TSchema> (app: FastifyInstance, route: WriteRouteOptions<P, B>) {
  const { operation } = route
  const op = operationOf(operation)
  const spec = op.route
  if (spec.method !== 'POST') throw new Error(`${operation} is not a write`)
  app.withTypeProvider<TypeBoxTypeProvider>().post(spec.url, {
    config: { scope: spec.scope, write: { operation, idParam: spec.idParam }, hubOperations: [operation] },
    schema: {
      tags: [spec.tag],
      summary: spec.summary,
      operationId: spec.operationId,
      description: spec.description,
      params: route.params,
      body: route.body,
      ...route.schema,
      response: { 200: recordEnvelope(op.response.item.id, spec.answer), ...WRITE_ERRORS }
    },
    ...(route.preValidation === undefined ? {} : { preValidation: route.preValidation })
  }, async (request, reply) => {
    const data = await route.handler(request, (sent) => sendToHub(request, reply, sent))
    reply.header('cache-control', 'no-store')
    return { data, meta: {} }
  })

  /**
   * The write's one hub call. Not sent for a caller that has hung up, such as
   * one that waited for another request with its Idempotency-Key (nobody
   * would learn its outcome). The request's WriteAttempt (the idempotency
   * plugin's) is marked sending by the call path's last step, just before the
   * request leaves (CallInput.beforeSend), which with a key is recorded in the
   * store: from then on the hub may get the request. A call that fails before
   * that mark leaves the attempt claimed, and the key is freed. Otherwise the
   * error says whether the hub may have acted: the key is freed or kept unknown.
   */
  async function sendToHub (request: FastifyRequest, reply: FastifyReply, sent: Parameters<HubWrite>[0]): Promise<unknown> {
    const attempt = request.writeAttempt
    if (attempt === null) throw new Error(`${operation}: a write without the idempotency plugin`)
    if (reply.raw.destroyed) throw gatewayError('CLIENT_CLOSED_REQUEST')
    try {
      // The handler passes the route's path parameter along: a hub profile may place the document's id in the hub's address.
      const beforeSend = () => attempt.sending()
      const answer = await app.hub.call(request, { operation, ...sent, beforeSend })
      attempt.answered()
      return answer.data
    } catch (error) {
      attempt.failed(hubMayHaveActed(error))
      throw error
    }
  }
}
