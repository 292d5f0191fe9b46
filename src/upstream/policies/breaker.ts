import CircuitBreaker from 'opossum'
import { codeOf, gatewayError, type ErrorCode } from '../../errors.ts'
import type { OperationId } from '../../catalogue/operations.ts'
import type { Fetched } from '../answer.ts'
import type { Call, CallContext, Policy } from '../call-path.ts'
import type { OperationMap, ResolvedOperation } from '../resolve-operations.ts'

export type BreakerState = 'closed' | 'open' | 'half-open'

export interface BreakerOptions {
  errorThresholdPercentage: number
  volumeThreshold: number
  rollingCountTimeout: number
  resetTimeout: number
}

export interface Breaker {
  /** Runs `next(ctx)` through the circuit; an open one answers UPSTREAM_UNAVAILABLE 503 at once. */
  run (next: Call, ctx: CallContext): Promise<Fetched>
  readonly state: BreakerState
  shutdown (): void
}

/**
 * What counts as the hub being down: unavailable (refused, reset, 5xx, 429)
 * or too slow. Not the hub refusing a request (4xx), and not an answer the
 * gateway cannot read (UPSTREAM_BAD_RESPONSE): a hub that answers is up, and
 * one odd document must not close an operation for everyone.
 */
const FAILURES: ReadonlySet<string> = new Set<ErrorCode>([
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_TIMEOUT'
])

/**
 * opossum's options for one upstream. Its latency percentiles and periodic
 * snapshots are off: nothing reads them, and they are not free. With them on,
 * opossum keeps every call's latency for the whole window, and each failure
 * (it reads the window's counts to decide whether to open) and each
 * snapshot (once a bucket, every second) concatenates and sorts them all:
 * with 25,000 calls in the window, 3.7 ms a failure, so a hub failing a third
 * of 2,500 calls a second, below the threshold, would take three cores.
 */
export function opossumOptions (name: string, options: BreakerOptions): CircuitBreaker.Options {
  return {
    name,
    timeout: false,
    errorThresholdPercentage: options.errorThresholdPercentage,
    volumeThreshold: options.volumeThreshold,
    rollingCountTimeout: options.rollingCountTimeout,
    resetTimeout: options.resetTimeout,
    rollingPercentilesEnabled: false,
    enableSnapshots: false,
    // Errors the filter accepts are not counted as failures.
    errorFilter: (error: unknown) => !FAILURES.has(codeOf(error) ?? '')
  }
}

/**
 * One circuit breaker (opossum); the hub client keeps one per upstream
 * address and operation, and runs each whole call (its retries included)
 * through it once. After enough failures in the window it opens, and calls
 * fail fast with a `retry-after` until the reset time passes; then one probe
 * (half-open) closes or reopens it.
 */
export function createBreaker (name: string, options: BreakerOptions): Breaker {
  // The call itself is opossum's action, given its context: no closure around it per call, and
  // no await in run (a promise and a turn fewer per call).
  const call = (next: Call, ctx: CallContext): Promise<Fetched> => next(ctx)
  const breaker = new CircuitBreaker(call, opossumOptions(name, options))
  let openedAt = 0
  breaker.on('open', () => { openedAt = Date.now() })
  const refused = (error: unknown): never => {
    if (codeOf(error) === 'EOPENBREAKER') {
      const wait = Math.max(1, Math.ceil((openedAt + options.resetTimeout - Date.now()) / 1000))
      const retryAfter = String(wait)
      throw gatewayError('UPSTREAM_UNAVAILABLE', { statusCode: 503, retryAfter, cause: error })
    }
    throw error
  }

  return {
    run: (next, ctx) => breaker.fire(next, ctx).catch(refused),
    get state (): BreakerState {
      if (breaker.opened) return 'open'
      if (breaker.halfOpen) return 'half-open'
      return 'closed'
    },
    shutdown () {
      breaker.shutdown()
    }
  }
}

/** One circuit: an operation of one upstream (`hub` is {hub_url}, `base` is {base_url}). */
export interface Circuit {
  upstream: 'hub' | 'base'
  operation: OperationId
  state: BreakerState
}

export interface Breakers {
  /**
   * The breaker step: the whole call below it (its retries included) through
   * the operation's circuit, so that it counts once.
   */
  policy: Policy
  /** The state of the operation's circuit (a span records it). */
  state (op: ResolvedOperation): BreakerState
  /** The state of every circuit (a gauge can read them). */
  circuits (): Circuit[]
  shutdown (): void
}

/**
 * One circuit per upstream address and operation: a lookup the hub keeps
 * failing opens its own circuit, not the writes' (nor the other lookups').
 */
export function createBreakers (operations: OperationMap, options: BreakerOptions): Breakers {
  const breakers = new Map<OperationId, Breaker>()
  for (const op of operations.values()) {
    breakers.set(op.id, createBreaker(`${op.service} ${op.id}`, options))
  }
  const of = (op: ResolvedOperation): Breaker => breakers.get(op.id)!
  return {
    policy: (next) => (ctx) => of(ctx.op).run(next, ctx),
    state: (op) => of(op).state,
    circuits: () => [...breakers].map(([operation, breaker]) => ({
      upstream: operations.get(operation)!.service,
      operation,
      state: breaker.state
    })),
    shutdown () {
      for (const breaker of breakers.values()) breaker.shutdown()
    }
  }
}
