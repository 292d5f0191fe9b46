import { STATUS_CODES } from 'node:http'
import createError, { type FastifyErrorConstructor } from '@fastify/error'

/** One code of the table: what a caller gets, and when. */
export interface ErrorEntry {
  /** The status it is answered with. */
  readonly status: number
  /** Other statuses it is given where it is made (ErrorExtras.statusCode). */
  readonly also?: readonly number[]
  /** The human message; `%s` is filled in where the error is made. */
  readonly message: string
  /** When the gateway answers it, in one sentence (docs/reference/errors.md). */
  readonly when: string
}

/**
 * Every error the gateway answers with (docs/api.md#the-envelope-and-errors): its code, its
 * status, its message and when it is answered. Routes throw these and the one error
 * handler (plugins/error-handler.ts) turns them into the envelope; `npm run openapi`
 * writes docs/reference/errors.md from this table.
 */
export const ERROR_TABLE = {
  VALIDATION_FAILED: {
    status: 400,
    message: '%s',
    when: 'A path, query, header or body value breaks its rule, or the body or the request ' +
      'itself is malformed; `details` names each field and rule.'
  },
  UNAUTHORIZED: {
    status: 401,
    message: 'Missing or unknown client credentials',
    when: 'A `/v1` request carries no client key, or one the gateway does not know.'
  },
  FORBIDDEN: {
    status: 403,
    message: 'The client lacks the scope %s',
    when: 'The client key is known but lacks the scope the route needs.'
  },
  NOT_FOUND: { status: 404, message: '%s', when: 'No route has this path.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    message: '%s',
    when: 'The path is a route, but not for this method; `allow` lists the methods it takes.'
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: 'The request was not received in time',
    when: 'The request did not arrive in full within the server\'s request timeout.'
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    message: 'The request body is larger than the limit of %s',
    when: 'The request body is over the route\'s body limit.'
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The request body must be application/json',
    when: 'A write\'s body comes with another content type than `application/json`.'
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'The request header fields are too large',
    when: 'The request\'s header fields are over the server\'s maximum header size.'
  },
  UPGRADE_REQUIRED: {
    status: 426,
    message: 'This route is a WebSocket: connect with Upgrade: websocket',
    when: '`GET /v1/events` is asked as plain HTTP instead of a WebSocket upgrade.'
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many requests, retry later',
    when: 'The client is over its request rate, its share of hub calls in flight or its ' +
      'event sockets and streams; `retry-after` says when to retry.'
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different request; use a new key ' +
      'for a new request',
    when: 'A write\'s `Idempotency-Key` was used before with a different request.'
  },
  // 409, not a 5xx: retrying with the same key gets the same answer for as long as the key
  // lives, so a client that retries 5xx by itself must not retry this one blindly
  // (docs/api.md#what-to-do-with-outcome_unknown).
  OUTCOME_UNKNOWN: {
    status: 409,
    message: 'An earlier request with this Idempotency-Key may have reached the customs hub, ' +
      'but its answer was lost; the gateway does not send it again with this key. Find out ' +
      'whether it took effect before sending it again with a new key',
    when: 'A write\'s `Idempotency-Key` belongs to an earlier request whose hub call may have ' +
      'taken effect but whose answer was lost.'
  },
  UPSTREAM_REJECTED: {
    status: 422,
    also: [400],
    message: 'The customs hub rejected the request as invalid',
    when: 'The hub refused the request: 400 when it answered 400, 422 for its other 4xx or a ' +
      '2xx reporting a failure; `upstreamMessage` carries its words.'
  },
  UPSTREAM_NOT_FOUND: {
    status: 404,
    message: 'The customs hub has no such document',
    when: 'The hub answered 404, or reported no data where the route asks for one record.'
  },
  UPSTREAM_AUTH_FAILED: {
    status: 502,
    message: 'The customs hub rejected the gateway\'s credentials',
    when: 'The hub answered 401 or 403: it refused the gateway\'s own credentials.'
  },
  UPSTREAM_UNAVAILABLE: {
    status: 502,
    also: [503],
    message: 'The customs hub did not answer',
    when: 'The hub failed (5xx), could not be reached or dropped the connection; 503 with ' +
      '`retry-after` when it answered 503 or 429, or the operation\'s circuit is open.'
  },
  UPSTREAM_TIMEOUT: {
    status: 504,
    message: 'The customs hub did not answer in time',
    when: 'The hub did not answer within the call\'s deadline, retries included.'
  },
  UPSTREAM_BAD_RESPONSE: {
    status: 502,
    message: 'The customs hub sent a response the gateway cannot read',
    when: 'The hub\'s answer cannot be read: not JSON, not of the expected shape, cut short ' +
      'or over the size limit.'
  },
  IDEMPOTENCY_UNAVAILABLE: {
    status: 503,
    message: 'The gateway cannot check this Idempotency-Key right now, so nothing was sent to ' +
      'the hub; retry shortly with the same key',
    when: 'A write with an `Idempotency-Key` arrives while the shared store (Redis) does not ' +
      'answer: nothing is sent to the hub; `retry-after` says when to retry.'
  },
  OVERLOADED: {
    status: 503,
    message: 'The gateway is overloaded; retry shortly',
    when: 'The gateway sheds load (event-loop delay or memory over their limits), or holds as ' +
      'many event sockets and streams as it may; `retry-after` says when to retry.'
  },
  EVENTS_UNAVAILABLE: {
    status: 503,
    message: 'The gateway cannot reach its shared state for event-stream tickets right now; ' +
      'retry shortly, or send the key in the Authorization header',
    when: 'An event-stream ticket cannot be issued or redeemed while the shared state (Redis) ' +
      'does not answer; `retry-after` says when to retry.'
  },
  SHUTTING_DOWN: {
    status: 503,
    message: 'The gateway is shutting down; retry on another instance',
    when: 'The gateway is closing: every request but `GET /health/live` gets it, with ' +
      '`retry-after`; another instance can answer.'
  },
  // nginx's 499: nobody reads this answer; it names the case in logs, audit lines and metrics.
  CLIENT_CLOSED_REQUEST: {
    status: 499,
    message: 'The client closed the connection before the write was sent to the hub; nothing ' +
      'was sent',
    when: 'The caller closed the connection before its write was sent to the hub: seen only ' +
      'in logs, audit lines and metrics.'
  },
  INTERNAL: {
    status: 500,
    message: 'Something went wrong in the gateway',
    when: 'A bug: the gateway met an error it did not expect.'
  }
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof ERROR_TABLE

/** What makes an error of one code (new errors[code](...args)). */
type ErrorMaker = FastifyErrorConstructor<{ code: ErrorCode, statusCode: number }>

/** The table's errors as @fastify/error constructors, by code. */
export const errors = Object.fromEntries(Object.entries(ERROR_TABLE).map(([code, entry]) =>
  [code, createError(code, entry.message, entry.status)])
  // Object.fromEntries keys its result by any string: these are the table's codes.
) as Readonly<Record<ErrorCode, ErrorMaker>>

/** The reason phrase of a status (the envelope's `error`): Node's, or nginx's name for 499. */
export function reasonPhrase (status: number): string {
  return STATUS_CODES[status] ?? (status === 499 ? 'Client Closed Request' : 'Error')
}

/** One rule a request broke: the field, and the rule in words. */
export interface ErrorDetail { field: string, rule: string }

/** What an error may carry besides its code and message, given when it is made. */
export interface ErrorExtras {
  /**
   * Another status than the code's own, where the code allows several (UPSTREAM_REJECTED 400 or
   * 422, ...).
   */
  statusCode?: number
  /** The hub's own message on a refusal, passed on to the caller (upstream/hub-message.ts). */
  upstreamMessage?: string
  /**
   * The hub's HTTP status, when it answered one (audit lines, retries, the token refresh, spans).
   */
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
export function isGatewayError<C extends ErrorCode> (
  error: unknown,
  ...codes: C[]
): error is GatewayError<C> {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string') {
    return false
  }
  const { code } = error
  const made = MADE_BY.get(code)
  return (
    made !== undefined &&
    error instanceof made &&
    (codes.length === 0 || codes.some((c) => c === code))
  )
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
