import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { gatewayError, isGatewayError, type ErrorCode } from '../errors.ts'
import { describeProblems, MAX_PROBLEMS, PART_NAMES, problemsMessage, type AjvIssue, type Problem } from '../schemas/problems.ts'

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
    const validate = request.getValidationFunction(part) as ((data: unknown) => boolean) & { errors?: AjvIssue[] | null } | undefined
    if (typeof validate !== 'function') continue
    const data = partData(request, part)
    if (validate(data ?? null) === true) continue
    problems.push(...describeProblems(validate.errors ?? [], PART_NAMES[part], data))
  }
  if (problems.length > 0) return problems
  // A validator that did not fail twice: what Fastify reported.
  const part = PARTS.find(p => p === error.validationContext)
  const where = part === undefined ? 'request' : PART_NAMES[part]
  return describeProblems((error.validation ?? []) as unknown as AjvIssue[], where, part === undefined ? undefined : partData(request, part))
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

export function sendError (request: FastifyRequest, reply: FastifyReply, error: Error & { code: string, statusCode: number, upstreamMessage?: string, retryAfter?: string, details?: Array<{ field: string, rule: string }> }) {
  if (error.retryAfter !== undefined) reply.header('retry-after', error.retryAfter)
  return reply.code(error.statusCode).send({
    statusCode: error.statusCode,
    code: error.code,
    error: STATUS_CODES[error.statusCode] ?? 'Error',
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
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id)
  const rule = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'each segment must be at most 200 characters' : 'must be valid percent-encoding'
  return sendError(request, reply, gatewayError('VALIDATION_FAILED', { details: [{ field: 'path', rule }] }, `The URL path is malformed: ${rule}`))
}

/**
 * The one place errors become the contract's envelope (contract.md 2).
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
      return sendError(request, reply, gatewayError('VALIDATION_FAILED', { details }, problemsMessage(details, problems.length)))
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const code = codeForStatus(status)
      const message = code === 'VALIDATION_FAILED' ? `The request is malformed: ${error.message}` : error.message
      const mapped = code === 'VALIDATION_FAILED' || code === 'NOT_FOUND'
        ? gatewayError(code, { statusCode: status }, message)
        : code === 'PAYLOAD_TOO_LARGE' ? gatewayError(code, { statusCode: status }, kib(request.routeOptions.bodyLimit)) : gatewayError(code, { statusCode: status })
      const retryAfter = reply.getHeader('retry-after')
      if (retryAfter !== undefined) mapped.retryAfter = String(retryAfter)
      return sendError(request, reply, mapped)
    }
    request.log.error({ err: error }, 'unhandled error')
    return sendError(request, reply, gatewayError('INTERNAL'))
  })

  // Rate limited like the routes, so that scanning for URLs costs the caller its budget.
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) => {
    return sendError(request, reply, gatewayError('NOT_FOUND', {}, `No route ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}`))
  })
}

export default fp(errorHandler, { name: 'error-handler', dependencies: ['rate-limit'] })
