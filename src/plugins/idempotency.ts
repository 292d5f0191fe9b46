import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { gatewayError } from '../errors.ts'
import { requestFingerprint } from '../idempotency/fingerprint.ts'
import { UNAVAILABLE_RETRY_AFTER, WriteAttempt } from '../idempotency/write-attempt.ts'
import { isStateUnavailable, type StoredResponse } from '../state/types.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { IDEMPOTENCY_KEY } from '../schemas/formats.ts'
import { Type } from '../typebox.ts'
import { addRouteHook } from './route-hooks.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A write route's request, once past validation: where it stands with the
     * hub (idempotency/write-attempt.ts). Created here, advanced by the write
     * route; null on other routes.
     */
    writeAttempt: WriteAttempt | null
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'idempotent-replayed'

/** The headers of an answer worth replaying along with its body. */
const REPLAYED_HEADERS = ['content-type', 'cache-control']

// No example value: Swagger UI would fill it into every "Try it out", and one key
// shared by every user makes the second user's different offer a 422 for a day.
const HeadersSchema = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      format: 'idempotency-key',
      pattern: IDEMPOTENCY_KEY.pattern,
      description:
        'Makes retries of this write safe: 1-255 visible ASCII characters, new for every ' +
        'distinct write (a UUID will do; in Swagger UI, leave it empty or type a fresh one). ' +
        'The same key with the same request within the replay window answers the first 2xx ' +
        'again, with `idempotent-replayed: true`, without calling the hub; ' +
        'with a different request it is 422 IDEMPOTENCY_KEY_REUSED. A write that failed before ' +
        'it could reach the hub, or that the hub refused (4xx), does not keep its key: retry it ' +
        'with the same one. ' +
        'One that may have reached the hub without an answer (a timeout, a dropped connection, a ' +
        'hub 5xx, a replica that died) is never sent again with its key: retries get 409 ' +
        'OUTCOME_UNKNOWN.'
    })
  )
})

const DESCRIPTION =
  '\n\n**Idempotency:** send an `Idempotency-Key` header and a retry of the same request within ' +
  'the replay window is answered from the first response ' +
  '(marked `idempotent-replayed: true`) instead of reaching the hub again; concurrent requests ' +
  "with one key make one hub call. The hub gets a key's request at most once: " +
  'when an earlier request with the key may have reached the hub but left no answer, a retry ' +
  'gets 409 OUTCOME_UNKNOWN, for as long as the key is kept.'

/**
 * Idempotent writes (the routes declaring `config.write`). The key is
 * scoped to the client, the method, the route and the caller's key; the
 * request is fingerprinted by its path parameters and validated body.
 * Concurrent requests with one key wait for the first and replay its
 * answer. Only 2xx answers are kept; a write that failed without reaching
 * the hub, or that the hub refused, frees its key so that the caller can
 * retry with it; one that may have reached the hub without an answer keeps
 * it as "outcome unknown" (409 OUTCOME_UNKNOWN): the hub gets each key's
 * request at most once. The answers are kept in the state's idempotency
 * store (state/); when a shared store cannot answer, a write with a key is
 * refused (503 IDEMPOTENCY_UNAVAILABLE) and one without a key goes on.
 */
async function idempotency (app: FastifyInstance) {
  const store = app.state.idempotency
  app.decorateRequest('writeAttempt', null)

  // The write routes get the header, the replay documentation and the hooks; lookups nothing.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.write === undefined) return
    addRouteHook(route, 'preHandler', claim)
    addRouteHook(route, 'onSend', settle)
    addRouteHook(route, 'onResponse', release)
    const response = route.schema?.response as Record<string, unknown> | undefined
    const ok = response?.[200] as Record<string, unknown> | undefined
    route.schema = {
      ...route.schema,
      description: `${route.schema?.description ?? ''}${DESCRIPTION}`,
      headers: HeadersSchema,
      ...(ok === undefined
        ? {}
        : {
            response: {
              ...response,
              200: {
                ...ok,
                headers: {
                  [REPLAYED_HEADER]: {
                    type: 'string',
                    enum: ['true'],
                    description: 'Present on a replay of an earlier answer (Idempotency-Key)'
                  }
                }
              },
              409: {
                ...errorResponses([409], { write: true })[409],
                description:
                  'An earlier request with this Idempotency-Key may have reached the hub, but ' +
                  'its answer was lost (OUTCOME_UNKNOWN): it is not sent again with this key'
              },
              422: {
                ...errorResponses([422], { write: true })[422],
                description:
                  'The hub rejected the request (UPSTREAM_REJECTED), or the Idempotency-Key was ' +
                  'used with a different request (IDEMPOTENCY_KEY_REUSED)'
              },
              503: errorResponses([503], { write: true })[503]
            }
          })
    }
  })

  function replay (request: FastifyRequest, reply: FastifyReply, response: StoredResponse) {
    request.writeAttempt = WriteAttempt.replayed()
    request.upstreamStatus = response.upstreamStatus
    for (const [name, value] of Object.entries(response.headers)) reply.header(name, value)
    return reply.code(response.statusCode).header(REPLAYED_HEADER, 'true').send(response.body)
  }

  /**
   * A store that cannot answer (Redis down or too slow) cannot tell a retry
   * from a new write: the request is refused and nothing reaches the hub,
   * since sending it could book twice.
   */
  async function begin (key: string, fingerprint: string) {
    try {
      return await store.begin(key, fingerprint)
    } catch (error) {
      if (isStateUnavailable(error)) {
        throw gatewayError('IDEMPOTENCY_UNAVAILABLE', {
          retryAfter: UNAVAILABLE_RETRY_AFTER,
          cause: error
        })
      }
      throw error
    }
  }

  // After validation: invalid requests never claim a key.
  async function claim (request: FastifyRequest, reply: FastifyReply) {
    const callerKey = request.headers[IDEMPOTENCY_HEADER]
    if (typeof callerKey !== 'string') {
      request.writeAttempt = new WriteAttempt()
      return
    }
    const key = [
      request.client?.name ?? '',
      request.method,
      request.routeOptions.url,
      callerKey
    ].join('\n')
    const fingerprint = requestFingerprint(request.params, request.body)
    for (;;) {
      const begun = await begin(key, fingerprint)
      if (begun.state === 'acquired') {
        request.writeAttempt = new WriteAttempt(begun.claim)
        return
      }
      if (begun.state === 'completed') return replay(request, reply, begun.response)
      if (begun.state === 'mismatch') throw gatewayError('IDEMPOTENCY_KEY_REUSED')
      if (begun.state === 'unknown') throw gatewayError('OUTCOME_UNKNOWN')
      // In flight: wait for the first request; it either completed (replay),
      // was freed (claim it) or left the outcome unknown.
      await begun.settled
    }
  }

  /**
   * The key's end, once the answer is known: a 2xx is kept and replayed; a
   * write that may have reached the hub without one is kept as "outcome
   * unknown" (never sent again with this key); any other frees the key.
   */
  async function finish (request: FastifyRequest, attempt: WriteAttempt, answer?: StoredResponse) {
    if (answer === undefined && attempt.mayHaveReachedHub) {
      request.log.warn('idempotency: the write may have reached the hub without an answer; ' +
        'its key answers OUTCOME_UNKNOWN')
    }
    await attempt.settle(answer)
  }

  async function settle (request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const attempt = request.writeAttempt
    if (attempt === null || attempt.settled) return payload
    let answer: StoredResponse | undefined
    const ok = reply.statusCode >= 200 && reply.statusCode < 300
    if (ok && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      const headers: Record<string, string> = {}
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name)
        if (value !== undefined) headers[name] = String(value)
      }
      answer = {
        statusCode: reply.statusCode,
        headers,
        body: payload.toString(),
        ...(request.upstreamStatus === undefined ? {} : { upstreamStatus: request.upstreamStatus })
      }
    }
    await finish(request, attempt, answer)
    return payload
  }

  // Should no answer have been sent at all, the key must not stay claimed.
  async function release (request: FastifyRequest) {
    const attempt = request.writeAttempt
    if (attempt === null || attempt.settled) return
    await finish(request, attempt)
  }
}

export default fp(idempotency, { name: 'idempotency', dependencies: ['state', 'clients', 'auth'] })
