import { STATUS_CODES } from 'node:http'
import createError from '@fastify/error'

/**
 * Every error the gateway answers with (docs/api.md#the-envelope). Each has a code, a
 * status and a human message; routes throw these and the one error handler
 * (plugins/error-handler.ts) turns them into the envelope.
 */
export const errors = {
  VALIDATION_FAILED: createError('VALIDATION_FAILED', '%s', 400),
  UNAUTHORIZED: createError('UNAUTHORIZED', 'Missing or unknown client credentials', 401),
  FORBIDDEN: createError('FORBIDDEN', 'The client lacks the scope %s', 403),
  NOT_FOUND: createError('NOT_FOUND', '%s', 404),
  METHOD_NOT_ALLOWED: createError('METHOD_NOT_ALLOWED', '%s', 405),
  REQUEST_TIMEOUT: createError('REQUEST_TIMEOUT', 'The request was not received in time', 408),
  PAYLOAD_TOO_LARGE: createError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit of %s', 413),
  UNSUPPORTED_MEDIA_TYPE: createError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json', 415),
  HEADERS_TOO_LARGE: createError('HEADERS_TOO_LARGE', 'The request header fields are too large', 431),
  UPGRADE_REQUIRED: createError('UPGRADE_REQUIRED', 'This route is a WebSocket: connect with Upgrade: websocket', 426),
  RATE_LIMITED: createError('RATE_LIMITED', 'Too many requests, retry later', 429),
  IDEMPOTENCY_KEY_REUSED: createError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request; use a new key for a new request', 422),
  // 409, not a 5xx: retrying with the same key gets the same answer for as long as the key lives,
  // so a client that retries 5xx by itself must not retry this one blindly (docs/idempotency.md).
  OUTCOME_UNKNOWN: createError('OUTCOME_UNKNOWN', 'An earlier request with this Idempotency-Key may have reached the customs hub, but its answer was lost; the gateway does not send it again with this key. Find out whether it took effect before sending it again with a new key', 409),
  UPSTREAM_REJECTED: createError('UPSTREAM_REJECTED', 'The customs hub rejected the request as invalid', 422),
  UPSTREAM_NOT_FOUND: createError('UPSTREAM_NOT_FOUND', 'The customs hub has no such document', 404),
  UPSTREAM_AUTH_FAILED: createError('UPSTREAM_AUTH_FAILED', 'The customs hub rejected the gateway\'s credentials', 502),
  UPSTREAM_UNAVAILABLE: createError('UPSTREAM_UNAVAILABLE', 'The customs hub did not answer', 502),
  UPSTREAM_TIMEOUT: createError('UPSTREAM_TIMEOUT', 'The customs hub did not answer in time', 504),
  UPSTREAM_BAD_RESPONSE: createError('UPSTREAM_BAD_RESPONSE', 'The customs hub sent a response the gateway cannot read', 502),
  IDEMPOTENCY_UNAVAILABLE: createError('IDEMPOTENCY_UNAVAILABLE', 'The gateway cannot check this Idempotency-Key right now, so nothing was sent to the hub; retry shortly with the same key', 503),
  OVERLOADED: createError('OVERLOADED', 'The gateway is overloaded; retry shortly', 503),
  EVENTS_UNAVAILABLE: createError('EVENTS_UNAVAILABLE', 'The gateway cannot reach its shared state for event-stream tickets right now; retry shortly, or send the key in the Authorization header', 503),
  SHUTTING_DOWN: createError('SHUTTING_DOWN', 'The gateway is shutting down; retry on another instance', 503),
  // nginx's 499: nobody reads this answer; it names the case in logs, audit lines and metrics.
  CLIENT_CLOSED_REQUEST: createError('CLIENT_CLOSED_REQUEST', 'The client closed the connection before the write was sent to the hub; nothing was sent', 499),
  INTERNAL: createError('INTERNAL', 'Something went wrong in the gateway', 500)
} as const

export type ErrorCode = keyof typeof errors

/** The reason phrase of a status (the envelope's `error`): Node's, or nginx's name for 499. */
export function reasonPhrase (status: number): string {
  return STATUS_CODES[status] ?? (status === 499 ? 'Client Closed Request' : 'Error')
}

/** One rule a request broke: the field, and the rule in words. */
export interface ErrorDetail { field: string, rule: string }

/** What an error may carry besides its code and message, given when it is made. */
export interface ErrorExtras {
  /** Another status than the code's own, where the code allows several (UPSTREAM_REJECTED 400 or 422, ...). */
  statusCode?: number
  /** The hub's own message on a refusal, passed on to the caller (upstream/hub-message.ts). */
  upstreamMessage?: string
  /** The hub's HTTP status, when it answered one (audit lines, retries, the token refresh, spans). */
  upstreamStatus?: number
  /** Seconds, sent as `retry-after`. */
  retryAfter?: string
  /**
   * A failed hub call that may have had its effect at the hub (the request
   * may have reached it and no answer says it was refused): a write's
   * Idempotency-Key is then kept as "outcome unknown" rather than freed.
   */
  hubMayHaveActed?: boolean
  /** The rules a request broke (VALIDATION_FAILED). */
  details?: readonly ErrorDetail[]
  cause?: unknown
}

/**
 * An error of the table, as the rest of the gateway reads it: its code, its
 * status, and the extras it was made with. Complete when made, and read-only:
 * an error says what it was made to say, and a reader that needs another
 * answer makes another error (remade). Tell one from any other thrown value
 * with isGatewayError, never by casting.
 */
export interface GatewayError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C
  readonly statusCode: number
  readonly message: string
  readonly upstreamMessage?: string
  readonly upstreamStatus?: number
  readonly retryAfter?: string
  readonly hubMayHaveActed?: boolean
  readonly details?: readonly ErrorDetail[]
  readonly cause?: unknown
}

/** The extras besides the status: fields of every error of the table, undefined when not given. */
const EXTRAS = [
  'upstreamMessage', 'upstreamStatus', 'retryAfter', 'hubMayHaveActed', 'details'
] as const

const FIXED = { writable: false, configurable: false } as const

/**
 * Makes an error of the table, complete: its code, status, message and
 * extras are read-only fields from the start, and the extras not given are
 * fields too, undefined and unlisted (nothing logs them), so that nothing
 * can be set or attached once it is made: an assignment throws. Not frozen:
 * pino's error serializer marks each error it logs for a moment (a symbol
 * it adds and deletes), which a frozen error refuses, and the log line with
 * it. (Its `name`, FastifyError, is left as Error has it: tap's assertions
 * redefine it.)
 */
function made (
  code: ErrorCode, extras: ErrorExtras, message: string | undefined, args: unknown[]
): GatewayError {
  const error: Error & { code: ErrorCode, statusCode: number } & ErrorExtras =
    new errors[code](...args)
  const fields: PropertyDescriptorMap = {
    code: FIXED,
    statusCode: { value: extras.statusCode ?? error.statusCode, ...FIXED },
    message: { value: message ?? error.message, ...FIXED }
  }
  for (const key of EXTRAS) {
    fields[key] = { value: extras[key], enumerable: extras[key] !== undefined, ...FIXED }
  }
  if (extras.cause !== undefined) {
    fields['cause'] = { value: extras.cause, enumerable: true, ...FIXED }
  }
  Object.defineProperties(error, fields)
  return error
}

export function gatewayError (
  code: ErrorCode, extras: ErrorExtras = {}, ...args: unknown[]
): GatewayError {
  return made(code, extras, undefined, args)
}

/**
 * `error` saying more, as a new error: the same code, status, message and
 * extras, those of `more` instead where it gives them, and `error` as its
 * cause (what a failure log line shows is the cause under them, reasonOf).
 */
export function remade (error: GatewayError, more: Omit<ErrorExtras, 'cause'>): GatewayError {
  const { code, message, statusCode, upstreamMessage, upstreamStatus, retryAfter, details } = error
  const was = { statusCode, upstreamMessage, upstreamStatus, retryAfter, details }
  const extras = { ...was, hubMayHaveActed: error.hubMayHaveActed, ...more, cause: error }
  return made(code, extras, message, [])
}

/**
 * What a failed call's log line shows as its `err`: the cause under the
 * contract's errors (undici's, Node's or opossum's error, past any error
 * remade from another), or the contract's error itself when it has none.
 */
export function reasonOf (error: unknown): unknown {
  let reason = error
  while (isGatewayError(reason) && reason.cause !== undefined) reason = reason.cause
  return reason
}

const MADE_BY = new Map(Object.entries(errors))

/**
 * Whether `error` was made by the table (gatewayError), of one of `codes`
 * when given: an error that only copies a code of the table has none of the
 * rest of the shape (its status) to be answered with.
 */
export function isGatewayError<C extends ErrorCode> (error: unknown, ...codes: C[]): error is GatewayError<C> {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string') return false
  const { code } = error
  const made = MADE_BY.get(code)
  return made !== undefined && error instanceof made && (codes.length === 0 || codes.some(c => c === code))
}

/** The hub's HTTP status an error carries, when it was made from the hub's answer. */
export function upstreamStatusOf (error: unknown): number | undefined {
  return isGatewayError(error) ? error.upstreamStatus : undefined
}

/**
 * The string `code` of any thrown value that has one: Node's system errors
 * (`ECONNRESET`), undici's (`UND_ERR_SOCKET`), opossum's (`EOPENBREAKER`),
 * the table's. A DOMException's numeric code is not one.
 */
export function codeOf (error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  return typeof error.code === 'string' ? error.code : undefined
}
