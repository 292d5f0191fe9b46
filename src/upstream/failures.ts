import { codeOf, gatewayError, isGatewayError, type ErrorCode } from '../errors.ts'

/**
 * Upstream failures mapped by cause, in one place (contract.md 2). Status
 * decides before body: a 5xx is UPSTREAM_UNAVAILABLE whatever it carries.
 */

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_ABORTED', 'ABORT_ERR'])

export type Outcome = 'ok' | 'cached' | 'stale' | 'rejected' | 'not_found' | 'auth_failed' | 'unavailable' | 'timeout' | 'bad_response'

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

/** A transport error (undici or node:net) before or while reading a response. */
export function transportFailure (error: unknown, phase: 'headers' | 'body') {
  const code = codeOf(error) ?? ''
  if (TIMEOUT_CODES.has(code) || (error instanceof Error && error.name === 'TimeoutError')) {
    return gatewayError('UPSTREAM_TIMEOUT', { cause: error })
  }
  // A body cut short after a 2xx status is a response we cannot read.
  if (phase === 'body') return gatewayError('UPSTREAM_BAD_RESPONSE', { cause: error })
  return gatewayError('UPSTREAM_UNAVAILABLE', { cause: error })
}

/** `retry-after` as seconds, from either form RFC 9110 allows; undefined when unusable. */
export function retryAfterSeconds (value: string | string[] | undefined, now = Date.now()): string | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined) return undefined
  if (/^\d{1,7}$/.test(raw.trim())) return String(Number(raw.trim()))
  const at = Date.parse(raw)
  if (Number.isNaN(at)) return undefined
  return String(Math.max(0, Math.ceil((at - now) / 1000)))
}

/** A non-2xx upstream status. */
export function statusFailure (status: number, upstreamMessage: string | undefined, retryAfter: string | undefined) {
  const extras = { upstreamStatus: status, ...(upstreamMessage === undefined ? {} : { upstreamMessage }) }
  if (status === 401 || status === 403) return gatewayError('UPSTREAM_AUTH_FAILED', extras)
  if (status === 404) return gatewayError('UPSTREAM_NOT_FOUND', extras)
  if (status === 429) return gatewayError('UPSTREAM_UNAVAILABLE', { ...extras, statusCode: 503, ...(retryAfter === undefined ? {} : { retryAfter }) })
  if (status >= 500) {
    const unavailable = status === 503
    return gatewayError('UPSTREAM_UNAVAILABLE', { ...extras, statusCode: unavailable ? 503 : 502, ...(unavailable && retryAfter !== undefined ? { retryAfter } : {}) })
  }
  if (status === 400) return gatewayError('UPSTREAM_REJECTED', { ...extras, statusCode: 400 })
  if (status >= 400) return gatewayError('UPSTREAM_REJECTED', { ...extras, statusCode: 422 })
  return gatewayError('UPSTREAM_BAD_RESPONSE', extras)
}
