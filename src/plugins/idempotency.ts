import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { gatewayError } from '../errors.ts'
import { requestFingerprint } from '../idempotency/fingerprint.ts'
import { isStateUnavailable } from '../state/errors.ts'
import type { StoredResponse } from '../state/types.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { IDEMPOTENCY_KEY } from '../schemas/formats.ts'
import { Type } from '../schemas/typebox.ts'
import { addRouteHook } from './route-hooks.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** True when this request was answered from the idempotency store. */
    idempotentReplay: boolean
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'idempotent-replayed'

/** The headers of an answer worth replaying along with its body. */
const REPLAYED_HEADERS = ['content-type', 'cache-control']

/**
 * retry-after of IDEMPOTENCY_UNAVAILABLE: the shared store (Redis) is
 * reconnected to at most every 2 s and checked every second (state/redis/connection.ts).
 */
const UNAVAILABLE_RETRY_AFTER = '2'

// No example value: Swagger UI would fill it into every "Try it out", and one key
// shared by every user makes the second user's different offer a 422 for a day.
const HeadersSchema = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(Type.String({
    format: 'idempotency-key',
    pattern: IDEMPOTENCY_KEY.pattern,
    description: 'Makes retries of this write safe: 1-255 visible ASCII characters, new for every distinct write (a UUID will do; in Swagger UI, leave it empty or type a fresh one). ' +
      'The same key with the same request within the replay window answers the first 2xx again, with `idempotent-replayed: true`, without calling the hub; ' +
      'with a different request it is 422 IDEMPOTENCY_KEY_REUSED. A failed write does not keep its key: retry it with the same one.'
  }))
})

const DESCRIPTION = '\n\n**Idempotency:** send an `Idempotency-Key` header and a retry of the same request within the replay window is answered from the first response ' +
  '(marked `idempotent-replayed: true`) instead of reaching the hub again; concurrent requests with one key make one hub call.'

interface Claim { key: string, done: boolean }
const kClaim = Symbol('idempotency claim')
type Claimed = FastifyRequest & { [kClaim]?: Claim }

/**
 * Idempotent writes (the routes declaring `config.write`). The key is
 * scoped to the client, the method, the route and the caller's key; the
 * request is fingerprinted by its path parameters and validated body. Only
 * 2xx answers are kept: a failed write releases its key so that the caller
 * can retry with it. Concurrent requests with one key wait for the first and
 * replay its answer. The answers are kept in the state's idempotency store
 * (state/); when a shared store cannot answer, a write with a key is
 * refused (503 IDEMPOTENCY_UNAVAILABLE) and one without a key goes on.
 */
async function idempotency (app: FastifyInstance) {
  const store = app.state.idempotency
  app.decorateRequest('idempotentReplay', false)

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
              200: { ...ok, headers: { [REPLAYED_HEADER]: { type: 'string', enum: ['true'], description: 'Present on a replay of an earlier answer (Idempotency-Key)' } } },
              422: { ...errorResponses([422], { write: true })[422], description: 'The hub rejected the request (UPSTREAM_REJECTED), or the Idempotency-Key was used with a different request (IDEMPOTENCY_KEY_REUSED)' },
              503: errorResponses([503], { write: true })[503]
            }
          })
    }
  })

  function replay (request: FastifyRequest, reply: FastifyReply, response: StoredResponse) {
    request.idempotentReplay = true
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
      if (isStateUnavailable(error)) throw gatewayError('IDEMPOTENCY_UNAVAILABLE', { retryAfter: UNAVAILABLE_RETRY_AFTER, cause: error })
      throw error
    }
  }

  // After validation: invalid requests never claim a key.
  async function claim (request: Claimed, reply: FastifyReply) {
    const callerKey = request.headers[IDEMPOTENCY_HEADER]
    if (typeof callerKey !== 'string') return
    const key = [request.client?.name ?? '', request.method, request.routeOptions.url, callerKey].join('\n')
    const fingerprint = requestFingerprint(request.params, request.body)
    for (;;) {
      const begun = await begin(key, fingerprint)
      if (begun.state === 'acquired') {
        request[kClaim] = { key, done: false }
        return
      }
      if (begun.state === 'completed') return replay(request, reply, begun.response)
      if (begun.state === 'mismatch') throw gatewayError('IDEMPOTENCY_KEY_REUSED')
      // In flight: wait for the first request; it either completed (replay) or released (claim it).
      await begun.settled
    }
  }

  async function settle (request: Claimed, reply: FastifyReply, payload: unknown) {
    const claim = request[kClaim]
    if (claim === undefined || claim.done) return payload
    claim.done = true
    if (reply.statusCode >= 200 && reply.statusCode < 300 && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
      const headers: Record<string, string> = {}
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name)
        if (value !== undefined) headers[name] = String(value)
      }
      await store.complete(claim.key, { statusCode: reply.statusCode, headers, body: payload.toString(), ...(request.upstreamStatus === undefined ? {} : { upstreamStatus: request.upstreamStatus }) })
    } else {
      await store.release(claim.key)
    }
    return payload
  }

  // Should no answer have been sent at all, the key must not stay claimed.
  async function release (request: Claimed) {
    const claim = request[kClaim]
    if (claim === undefined || claim.done) return
    claim.done = true
    await store.release(claim.key)
  }
}

export default fp(idempotency, { name: 'idempotency', dependencies: ['state', 'clients', 'auth'] })
