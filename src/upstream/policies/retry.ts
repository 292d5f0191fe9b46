/**
 * Retry policy of GET lookups (POSTs are never retried): refused or reset
 * connections and hub 502/503/504, with exponential backoff and full jitter,
 * honouring the hub's `retry-after`, never past the request's deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { codeOf, gatewayError, isGatewayError, type GatewayError } from '../../errors.ts'
import type { Deadline } from './deadline.ts'

const RETRY_STATUSES = new Set([502, 503, 504])
const RETRY_TRANSPORT = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])

export interface RetryPolicy {
  retries: number
  baseMs: number
  maxMs: number
}

export function isRetryable (error: GatewayError): boolean {
  if (error.code !== 'UPSTREAM_UNAVAILABLE') return false
  if (error.upstreamStatus !== undefined) return RETRY_STATUSES.has(error.upstreamStatus)
  return RETRY_TRANSPORT.has(codeOf(error.cause) ?? '')
}

/**
 * The wait before retry number `attempt` (0-based), or undefined when the
 * hub asks for a longer wait than the policy allows.
 */
export function retryDelay (policy: RetryPolicy, attempt: number, error: Pick<GatewayError, 'retryAfter'>, random = Math.random): number | undefined {
  const backoff = random() * Math.min(policy.maxMs, policy.baseMs * 2 ** attempt)
  const retryAfter = Number(error.retryAfter)
  if (!Number.isFinite(retryAfter)) return Math.round(backoff)
  const asked = retryAfter * 1000
  if (asked > policy.maxMs) return undefined
  return Math.round(Math.max(asked, backoff))
}

/**
 * `send` (given its attempt number, from 1), retried by the policy while the error allows and the next try
 * would start before `deadline` (ms); a GET lookup only. The wait ends with
 * UPSTREAM_TIMEOUT when `signal` (the deadline's) aborts it.
 */
export async function withRetries<T> (
  policy: RetryPolicy,
  op: { id: string, method: string },
  deadline: Deadline,
  log: FastifyBaseLogger,
  send: (attempt: number) => Promise<T>
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await send(n + 1)
    } catch (error) {
      if (op.method !== 'GET' || n >= policy.retries || !isGatewayError(error) || !isRetryable(error)) throw error
      const delay = retryDelay(policy, n, error)
      if (delay === undefined || Date.now() + delay >= deadline.at) throw error
      log.warn({ operation: op.id, retry: n + 1, delayMs: delay, upstreamStatus: error.upstreamStatus }, 'retrying hub call')
      await sleep(delay, undefined, { signal: deadline.signal }).catch(() => { throw gatewayError('UPSTREAM_TIMEOUT') })
    }
  }
}
