import fp from 'fastify-plugin'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RouteOptions
} from 'fastify'
import { upstreamStatusOf } from '../errors.ts'
import { addRouteHook } from './route-hooks.ts'

const QUIETER_THAN_INFO = new Set(['warn', 'error', 'fatal'])

interface Audit { statusCode?: number, aborted: boolean, written: boolean }
const kAudit = Symbol('audit')
type Audited = FastifyRequest & { [kAudit]?: Audit }

/**
 * One JSON log line per write (the routes declaring `config.write`),
 * whatever its outcome, refused ones included (docs/operations.md#logs):
 * `{ audit: true, client, operation, bookingRequestId | sp2Id, upstreamStatus,
 * requestId, replayed, statusCode }`. Never a body, a key or a header.
 * Written at info even when LOG_LEVEL is quieter (only `silent` drops them).
 *
 * Normally written when the answer is sent (onResponse). A caller that hangs
 * up while its write is at the hub gets no response, but the write happened:
 * its line is written once the outcome is known, with `aborted: true`.
 */
async function audit (app: FastifyInstance) {
  const level = app.log.level
  const log: FastifyBaseLogger = QUIETER_THAN_INFO.has(level)
    ? app.log.child({}, { level: 'info' })
    : app.log

  function write (request: Audited, state: Audit) {
    const route = request.routeOptions.config.write
    if (route === undefined || state.written) return
    state.written = true
    const params = request.params
    const id: unknown =
      typeof params === 'object' && params !== null ? Reflect.get(params, route.idParam) : undefined
    log.info({
      audit: true,
      client: request.client?.name ?? null,
      operation: route.operation,
      [route.idParam]: typeof id === 'string' ? id : null,
      upstreamStatus: request.upstreamStatus ?? null,
      requestId: request.id,
      replayed: request.writeAttempt?.replayed === true,
      statusCode: state.statusCode ?? null,
      ...(state.aborted ? { aborted: true } : {})
    }, 'audit')
  }

  function stateOf (request: Audited): Audit {
    request[kAudit] ??= { aborted: false, written: false }
    return request[kAudit]
  }

  // The hooks go on the write routes only: lookups pay nothing for auditing.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.write === undefined) return
    // The hub client notes its status on the request; an error carrying one is noted too.
    addRouteHook(
      route,
      'onError',
      async (request: Audited, _reply: FastifyReply, error: unknown) => {
        const status = upstreamStatusOf(error)
        if (request.upstreamStatus === undefined && status !== undefined) {
          request.upstreamStatus = status
        }
      }
    )
    // A caller hanging up after sending its body is not an "aborted request" to Fastify
    // (onRequestAbort does not fire): watch the connection of each write instead.
    addRouteHook(route, 'onRequest', async (request: Audited, reply: FastifyReply) => {
      const state = stateOf(request)
      reply.raw.once('close', () => {
        if (reply.raw.writableFinished) return
        state.aborted = true
        if (state.statusCode !== undefined) write(request, state)
      })
    })
    addRouteHook(
      route,
      'onSend',
      async (request: Audited, reply: FastifyReply, payload: unknown) => {
        const state = stateOf(request)
        state.statusCode = reply.statusCode
        if (state.aborted) write(request, state)
        return payload
      }
    )
    addRouteHook(route, 'onResponse', async (request: Audited, reply: FastifyReply) => {
      const state = stateOf(request)
      state.statusCode = reply.statusCode
      write(request, state)
    })
  })
}

export default fp(audit, { name: 'audit', dependencies: ['clients', 'auth', 'idempotency'] })
