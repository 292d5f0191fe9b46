/**
 * Retry policy of GET lookups (POSTs are never retried): refused or reset
 * connections and hub 502/503/504, with exponential backoff and full jitter,
 * honouring the hub's `retry-after`, never past the request's deadline.
 */

const RETRY_STATUSES = new Set([502, 503, 504])
const RETRY_TRANSPORT = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])

export interface RetryPolicy {
  retries: number
  baseMs: number
  maxMs: number
}

interface Failure { code?: string, upstreamStatus?: number, retryAfter?: string, cause?: { code?: string } }

export function isRetryable (error: unknown): boolean {
  const failure = error as Failure
  if (failure.code !== 'UPSTREAM_UNAVAILABLE') return false
  if (failure.upstreamStatus !== undefined) return RETRY_STATUSES.has(failure.upstreamStatus)
  return RETRY_TRANSPORT.has(failure.cause?.code ?? '')
}

/**
 * The wait before retry number `attempt` (0-based), or undefined when the
 * hub asks for a longer wait than the policy allows.
 */
export function retryDelay (policy: RetryPolicy, attempt: number, error: unknown, random = Math.random): number | undefined {
  const backoff = random() * Math.min(policy.maxMs, policy.baseMs * 2 ** attempt)
  const retryAfter = Number((error as Failure).retryAfter)
  if (!Number.isFinite(retryAfter)) return Math.round(backoff)
  const asked = retryAfter * 1000
  if (asked > policy.maxMs) return undefined
  return Math.round(Math.max(asked, backoff))
}
