/**
 * Retry policy of GET lookups (POSTs are never retried): refused or reset
 * connections and hub 502/503/504, with exponential backoff and full jitter,
 * honouring the hub's `retry-after`, never past the request's deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { codeOf, gatewayError, isGatewayError, type GatewayError } from '../../errors.ts'
import type { Fetched } from '../answer.ts'
import type { Call, CallContext, Policy } from '../call-path.ts'

const RETRY_STATUSES = new Set([502, 503, 504])
const RETRY_TRANSPORT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED'
])

export interface RetryOptions {
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
export function retryDelay (
  policy: RetryOptions,
  attempt: number,
  error: Pick<GatewayError, 'retryAfter'>,
  random = Math.random
): number | undefined {
  const backoff = random() * Math.min(policy.maxMs, policy.baseMs * 2 ** attempt)
  const retryAfter = Number(error.retryAfter)
  if (!Number.isFinite(retryAfter)) return Math.round(backoff)
  const asked = retryAfter * 1000
  if (asked > policy.maxMs) return undefined
  return Math.round(Math.max(asked, backoff))
}

/**
 * The retry step: a GET lookup's attempt again while the policy and the
 * error allow and the next try would start before the call's deadline; the
 * wait ends with UPSTREAM_TIMEOUT when the deadline's signal aborts it.
 * Writes go down once (their one attempt numbered 1, as the context has it).
 */
export function retryPolicy (options: RetryOptions): Policy {
  return (next) => (ctx) => ctx.op.method === 'GET' ? attempts(options, next, ctx) : next(ctx)
}

async function attempts (options: RetryOptions, next: Call, ctx: CallContext): Promise<Fetched> {
  for (let n = 0; ; n++) {
    ctx.attempt = n + 1
    try {
      return await next(ctx)
    } catch (error) {
      if (n >= options.retries || !isGatewayError(error) || !isRetryable(error)) throw error
      const delay = retryDelay(options, n, error)
      const { deadline, log, op } = ctx
      if (delay === undefined || Date.now() + delay >= deadline.at) throw error
      const retry = n + 1
      log.warn({ operation: op.id, retry, delayMs: delay, upstreamStatus: error.upstreamStatus },
        'retrying hub call')
      await sleep(delay, undefined, { signal: deadline.signal })
        .catch(() => { throw gatewayError('UPSTREAM_TIMEOUT') })
    }
  }
}
