import type { StateUnavailable } from './types.ts'

/**
 * A shared store could not answer (Redis down, too slow, or holding a value
 * this version cannot read). Where a wrong answer could cost a second hub
 * write (idempotency), the store says so with this error instead of
 * guessing; the caller answers 503 with `retry-after` and sends nothing on.
 */
export class StateUnavailableError extends Error implements StateUnavailable {
  readonly code = 'STATE_UNAVAILABLE'

  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StateUnavailableError'
  }
}

// Its guard, isStateUnavailable, is in state/types.ts, beside the interfaces its users read.
