import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { gatewayError, isGatewayError, type ErrorCode } from '../errors.ts'
import { PARAM_RULES } from '../schemas/params.ts'

/** Human rules for body fields, named like the parameter rules. */
const BODY_RULES: Record<string, string> = {
  serviceOrderId: 'must be a string of 1 to 64 characters',
  price: 'must be a non-negative number with at most two decimals',
  offeredAt: 'must be an ISO 8601 date-time with an offset, e.g. 2024-03-01T08:15:00+07:00',
  booked: 'must be true',
  note: 'must be a string of at most 500 characters',
  'idempotency-key': 'must be 1 to 255 visible ASCII characters'
}

const RULES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(PARAM_RULES).map(([name, { rule }]) => [name, rule])),
  ...BODY_RULES
}

const CONTEXT: Record<string, string> = { querystring: 'query', params: 'path', body: 'body', headers: 'header' }

interface AjvIssue { keyword: string, instancePath: string, message?: string, params: Record<string, unknown> }

/** One `{field, rule}` per ajv issue, in words a caller can act on. */
export function describeValidation (issues: AjvIssue[], context: string | undefined): Array<{ field: string, rule: string }> {
  const where = CONTEXT[context ?? ''] ?? context ?? 'request'
  return issues.map(issue => {
    const path = issue.instancePath.split('/').filter(Boolean)
    if (issue.keyword === 'required') {
      const name = String(issue.params.missingProperty)
      return { field: [where, ...path, name].join('.'), rule: `is required${RULES[name] ? ` and ${RULES[name]}` : ''}` }
    }
    if (issue.keyword === 'additionalProperties') {
      const name = String(issue.params.additionalProperty)
      return { field: [where, ...path, name].join('.'), rule: 'is not a parameter of this route' }
    }
    if (issue.keyword === 'type' && path.length === 0) {
      return { field: where, rule: `must be a JSON ${String(issue.params.type)}` }
    }
    const name = path[path.length - 1]
    const rule = (name !== undefined && RULES[name]) || issue.message || 'is invalid'
    return { field: [where, ...path].join('.') || where, rule }
  })
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
      const details = describeValidation(error.validation as unknown as AjvIssue[], error.validationContext)
      const message = details.map(d => `${d.field} ${d.rule}`).join('; ')
      return sendError(request, reply, gatewayError('VALIDATION_FAILED', { details }, message))
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const code = codeForStatus(status)
      const message = code === 'VALIDATION_FAILED' ? `The request is malformed: ${error.message}` : error.message
      const mapped = code === 'VALIDATION_FAILED' || code === 'NOT_FOUND' ? gatewayError(code, { statusCode: status }, message) : gatewayError(code, { statusCode: status })
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
