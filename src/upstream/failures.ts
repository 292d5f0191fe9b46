import { codeOf, gatewayError, isGatewayError, remade, type ErrorCode } from '../errors.ts'

/**
 * Upstream failures mapped by cause, in one place (docs/api.md#the-envelope-and-errors). Status
 * decides before body: a 5xx is UPSTREAM_UNAVAILABLE whatever it carries.
 */

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_ABORTED',
  'ABORT_ERR'
])

export type Outcome =
  | 'ok'
  | 'cached'
  | 'stale'
  | 'rejected'
  | 'not_found'
  | 'auth_failed'
  | 'unavailable'
  | 'timeout'
  | 'bad_response'

const OUTCOME_BY_CODE: Partial<Record<ErrorCode, Outcome>> = {
  UPSTREAM_REJECTED: 'rejected',
  UPSTREAM_NOT_FOUND: 'not_found',
  UPSTREAM_AUTH_FAILED: 'auth_failed',
  UPSTREAM_UNAVAILABLE: 'unavailable',
  UPSTREAM_TIMEOUT: 'timeout',
  UPSTREAM_BAD_RESPONSE: 'bad_response'
}

export function outcomeOf (error: unknown): Outcome {
  return (isGatewayError(error) && OUTCOME_BY_CODE[error.code]) || 'unavailable'
}

/**
 * Errors of a connection that was never made: refused, unreachable, not
 * resolved, timed out while connecting, or a TLS handshake that failed (a
 * certificate refused, a wrong protocol). No byte of the request reached the
 * hub. Any other error may have come after the request was written.
 */
const NOT_CONNECTED = new RegExp(
  '^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|' +
  'UND_ERR_CONNECT_TIMEOUT|ERR_TLS_CERT_ALTNAME_INVALID|ERR_TLS_HANDSHAKE_TIMEOUT|' +
  'ERR_SSL_WRONG_VERSION_NUMBER)$|^UNABLE_TO_|CERT'
)

function neverConnected (error: unknown): boolean {
  const code = codeOf(error)
  return code !== undefined && NOT_CONNECTED.test(code)
}

/**
 * Whether a failed hub call may have had its effect at the hub. Only what
 * shows it did not counts as "no": a connection never made, or a 4xx (the hub
 * refused the request). A timeout, a connection lost after the request was
 * written, a 5xx, or a 2xx the gateway could not read may each follow an
 * effect. An error raised before the transport (an open circuit, the
 * caller's share of connections, the deadline passed) carries no mark: no
 * request was sent.
 */
export function hubMayHaveActed (error: unknown): boolean {
  return isGatewayError(error) && error.hubMayHaveActed === true
}

/**
 * A failure after the hub answered 2xx (its body cut short, too large, or
 * unreadable): the hub acted, whatever became of its answer here. The same
 * error marked so, as a new error (the original its cause); any other thrown
 * value as it is (hubMayHaveActed reads the contract's errors only).
 */
export function afterHubActed (error: unknown): unknown {
  if (!isGatewayError(error) || error.hubMayHaveActed === true) return error
  return remade(error, { hubMayHaveActed: true })
}

/** A transport error (undici or node:net) before or while reading a response. */
export function transportFailure (error: unknown, phase: 'headers' | 'body') {
  const code = codeOf(error) ?? ''
  const hubMayHaveActed = phase === 'body' || !neverConnected(error)
  if (TIMEOUT_CODES.has(code) || (error instanceof Error && error.name === 'TimeoutError')) {
    return gatewayError('UPSTREAM_TIMEOUT', { cause: error, hubMayHaveActed })
  }
  // A body cut short after a 2xx status is a response we cannot read.
  if (phase === 'body') {
    return gatewayError('UPSTREAM_BAD_RESPONSE', { cause: error, hubMayHaveActed })
  }
  return gatewayError('UPSTREAM_UNAVAILABLE', { cause: error, hubMayHaveActed })
}

/** `retry-after` as seconds, from either form RFC 9110 allows; undefined when unusable. */
export function retryAfterSeconds (
  value: string | string[] | undefined,
  now = Date.now()
): string | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined) return undefined
  if (/^\d{1,7}$/.test(raw.trim())) return String(Number(raw.trim()))
  const at = Date.parse(raw)
  if (Number.isNaN(at)) return undefined
  return String(Math.max(0, Math.ceil((at - now) / 1000)))
}

/**
 * A non-2xx upstream status. A 4xx is the hub's refusal: it did not act; after a 5xx it may have.
 */
export function statusFailure (
  status: number,
  upstreamMessage: string | undefined,
  retryAfter: string | undefined
) {
  const extras = {
    upstreamStatus: status,
    hubMayHaveActed: status >= 500 || status < 400,
    ...(upstreamMessage === undefined ? {} : { upstreamMessage })
  }
  if (status === 401 || status === 403) return gatewayError('UPSTREAM_AUTH_FAILED', extras)
  if (status === 404) return gatewayError('UPSTREAM_NOT_FOUND', extras)
  if (status === 429) {
    return gatewayError('UPSTREAM_UNAVAILABLE', {
      ...extras,
      statusCode: 503,
      ...(retryAfter === undefined ? {} : { retryAfter })
    })
  }
  if (status >= 500) {
    const unavailable = status === 503
    return gatewayError('UPSTREAM_UNAVAILABLE', {
      ...extras,
      statusCode: unavailable ? 503 : 502,
      ...(unavailable && retryAfter !== undefined ? { retryAfter } : {})
    })
  }
  if (status === 400) return gatewayError('UPSTREAM_REJECTED', { ...extras, statusCode: 400 })
  if (status >= 400) return gatewayError('UPSTREAM_REJECTED', { ...extras, statusCode: 422 })
  return gatewayError('UPSTREAM_BAD_RESPONSE', extras)
}
