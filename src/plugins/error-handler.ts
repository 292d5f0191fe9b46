import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import FindMyWay from 'find-my-way'
import fp from 'fastify-plugin'
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RouteOptions
} from 'fastify'
import {
  gatewayError,
  isGatewayError,
  reasonPhrase,
  type ErrorCode,
  type GatewayError
} from '../errors.ts'
import { isDiscarding } from './lingering-close.ts'
import {
  describeProblems,
  MAX_PROBLEMS,
  PART_NAMES,
  problemsMessage,
  type AjvIssue,
  type Problem
} from '../schemas/problems.ts'

const PARTS = Object.keys(PART_NAMES) as Array<keyof typeof PART_NAMES>

function partData (request: FastifyRequest, part: keyof typeof PART_NAMES): unknown {
  return part === 'querystring' ? request.query : request[part]
}

/**
 * Every problem of a request, not only those of the part Fastify stopped at:
 * Fastify validates path, body, query and headers in turn and stops at the
 * first part that fails, so the route's validators of all parts are run
 * again here (on this failure path only). In the order a caller reads a
 * request: path, query, body, headers.
 */
export function requestProblems (request: FastifyRequest, error: FastifyError): Problem[] {
  const problems: Problem[] = []
  for (const part of ['params', 'querystring', 'body', 'headers'] as const) {
    const validate = request.getValidationFunction(part) as
      (((data: unknown) => boolean) & { errors?: AjvIssue[] | null }) | undefined
    if (typeof validate !== 'function') continue
    const data = partData(request, part)
    if (validate(data ?? null) === true) continue
    problems.push(...describeProblems(validate.errors ?? [], PART_NAMES[part], data))
  }
  if (problems.length > 0) return problems
  // A validator that did not fail twice: what Fastify reported.
  const part = PARTS.find(p => p === error.validationContext)
  const where = part === undefined ? 'request' : PART_NAMES[part]
  return describeProblems(
    error.validation ?? [],
    where,
    part === undefined ? undefined : partData(request, part)
  )
}

/** `65536` -> `64 KiB`. */
function kib (bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`
}

/** Fastify's own client errors, by status, to the contract's codes. */
function codeForStatus (status: number): ErrorCode {
  if (status === 404) return 'NOT_FOUND'
  if (status === 413) return 'PAYLOAD_TOO_LARGE'
  if (status === 415) return 'UNSUPPORTED_MEDIA_TYPE'
  if (status === 429) return 'RATE_LIMITED'
  if (status === 401) return 'UNAUTHORIZED'
  if (status === 403) return 'FORBIDDEN'
  return 'VALIDATION_FAILED'
}

export function sendError (request: FastifyRequest, reply: FastifyReply, error: GatewayError) {
  if (error.retryAfter !== undefined) reply.header('retry-after', error.retryAfter)
  return reply.code(error.statusCode).send({
    statusCode: error.statusCode,
    code: error.code,
    error: reasonPhrase(error.statusCode),
    message: error.message,
    requestId: request.id,
    ...(error.upstreamMessage === undefined ? {} : { upstreamMessage: error.upstreamMessage }),
    ...(error.details === undefined ? {} : { details: error.details })
  })
}

/**
 * Fastify's `frameworkErrors` option: what it refuses before routing (bad
 * percent-encoding in the path, a path parameter over `maxParamLength`) gets
 * the envelope too, rather than Fastify's own body. No hook has run yet, so
 * the request id header is set here. The raw path is not echoed.
 */
export function frameworkErrors (
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply
) {
  reply.header('x-request-id', request.id)
  const rule =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'each segment must be at most 200 characters'
      : 'must be valid percent-encoding'
  return sendError(
    request,
    reply,
    gatewayError(
      'VALIDATION_FAILED',
      { details: [{ field: 'path', rule }] },
      `The URL path is malformed: ${rule}`
    )
  )
}

/** Node's own refusals, by the HTTP parser's error code (docs/api.md#the-envelope-and-errors). */
function parserRefusal (code: string | undefined): { code: ErrorCode, message?: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { code: 'HEADERS_TOO_LARGE' }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'REQUEST_TIMEOUT' }
  return { code: 'VALIDATION_FAILED', message: 'The request is not valid HTTP/1.1' }
}

/**
 * Fastify's `clientErrorHandler` option: what Node's HTTP parser refuses
 * before there is a request (a bad request line, header fields over
 * `maxHeaderSize`, a request not received in time) gets the envelope and a
 * request id too, written to the socket as Fastify's default handler does,
 * rather than Fastify's bare `{"message":"Client Error"}`. Nothing of the
 * refused bytes is echoed. The id is new: there is no request to take one from.
 */
export function clientErrorHandler (
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket
): void {
  // A reset connection has nobody to answer (Fastify's default handler, and Node's, do the same).
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // A caller that stopped sending a body the gateway had refused and was discarding: it has its
  // answer.
  if (isDiscarding(socket)) {
    socket.destroy()
    return
  }
  const refusal = parserRefusal(error.code)
  const problem = gatewayError(refusal.code, {}, refusal.message)
  const requestId = randomUUID()
  this.log.info(
    { requestId, parserError: error.code, statusCode: problem.statusCode },
    'request refused by the HTTP parser'
  )
  if (socket.writable) {
    const body = JSON.stringify({
      statusCode: problem.statusCode,
      code: problem.code,
      error: STATUS_CODES[problem.statusCode],
      message: problem.message,
      requestId
    })
    socket.write(
      `HTTP/1.1 ${problem.statusCode} ${STATUS_CODES[problem.statusCode]}\r\n` +
        'content-type: application/json; charset=utf-8\r\ncontent-length: ' +
        `${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: ` +
        `close\r\n\r\n${body}`
    )
  }
  socket.destroy(error)
}

/**
 * Every route's path and methods, in a router of their own (find-my-way,
 * Fastify's router), so that a known path asked with another method is told
 * which methods it takes (405 with `Allow`) rather than that it does not
 * exist. Catch-all routes (`*`: the CORS preflight) are left out: they would
 * make every path "known".
 */
function knownRoutes (app: FastifyInstance) {
  const router = FindMyWay({ maxParamLength: 200 })
  const methods = new Set<string>()
  const noop = () => {}
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url === '*' || route.url === '/*') return
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (router.hasRoute(method as 'GET', route.url)) continue
      router.on(method as 'GET', route.url, noop)
      methods.add(method)
    }
  })
  /** The methods `path` is a route for, in a stable order; empty when it is no route at all. */
  return (path: string): string[] => [...methods].sort().filter(method => {
    try {
      return router.find(method as 'GET', path) !== null
    } catch {
      // A path find-my-way cannot decode is no route of ours.
      return false
    }
  })
}

/**
 * The one place errors become the contract's envelope (docs/api.md#the-envelope-and-errors).
 * Routes throw; nothing else writes an error body.
 */
async function errorHandler (app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isGatewayError(error)) {
      if (error.code === 'INTERNAL') request.log.error({ err: error }, 'internal error')
      return sendError(request, reply, error)
    }
    if (error.validation !== undefined) {
      const problems = requestProblems(request, error)
      const details = problems.slice(0, MAX_PROBLEMS)
      return sendError(
        request,
        reply,
        gatewayError('VALIDATION_FAILED', { details }, problemsMessage(details, problems.length))
      )
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const code = codeForStatus(status)
      const message =
        code === 'VALIDATION_FAILED' ? `The request is malformed: ${error.message}` : error.message
      const retryAfter = reply.getHeader('retry-after')
      const extras = {
        statusCode: status,
        ...(retryAfter === undefined ? {} : { retryAfter: String(retryAfter) })
      }
      const mapped =
        code === 'VALIDATION_FAILED' || code === 'NOT_FOUND'
          ? gatewayError(code, extras, message)
          : code === 'PAYLOAD_TOO_LARGE'
            ? gatewayError(code, extras, kib(request.routeOptions.bodyLimit))
            : gatewayError(code, extras)
      return sendError(request, reply, mapped)
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendError(request, reply, gatewayError('INTERNAL'))
  })

  const methodsOf = knownRoutes(app)
  // Rate limited like the routes, so that scanning for URLs costs the caller its budget.
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => {
    const path = request.url.split('?')[0] ?? ''
    const allowed = methodsOf(path)
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      return sendError(
        request,
        reply,
        gatewayError(
          'METHOD_NOT_ALLOWED',
          {},
          `${path.slice(0, 200)} takes ${allowed.join(', ')}, not ${request.method}`
        )
      )
    }
    return sendError(
      request,
      reply,
      gatewayError('NOT_FOUND', {}, `No route ${request.method} ${path.slice(0, 200)}`)
    )
  })
}

export default fp(errorHandler, { name: 'error-handler', dependencies: ['rate-limit'] })
