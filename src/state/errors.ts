/**
 * A shared store could not answer (Redis down, too slow, or holding a value
 * this version cannot read). Where a wrong answer could cost a second hub
 * write (idempotency), the store says so with this error instead of
 * guessing; the caller answers 503 with `retry-after` and sends nothing on.
 */
export class StateUnavailableError extends Error {
  readonly code = 'STATE_UNAVAILABLE'

  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StateUnavailableError'
  }
}

export function isStateUnavailable (error: unknown): error is StateUnavailableError {
  return error instanceof Error && 'code' in error && error.code === 'STATE_UNAVAILABLE'
}
