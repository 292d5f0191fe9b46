/**
 * The deadline of one hub call (UPSTREAM_DEADLINE_MS): the whole call, its
 * retries, waits for a thread and the body budget included. The deadline
 * step starts it (policies/deadline.ts); the transport and the decoder read
 * it.
 */
export interface Deadline {
  /** When it passes (ms, Date.now's clock: the timers that enforce it run on it too). */
  readonly at: number
  /**
   * Aborts when it passes. Made when first read: only what waits (a retry's
   * backoff, the body budget, a transcoding thread) needs one; the exchange
   * with the hub keeps its own timer to `at` (transport.ts). An
   * `AbortSignal.timeout` per call was a timer, a signal and its listeners on
   * every lookup.
   */
  readonly signal: AbortSignal
}

export function startDeadline (ms: number): Deadline {
  const at = Date.now() + ms
  let signal: AbortSignal | undefined
  return {
    at,
    get signal () {
      signal ??= AbortSignal.timeout(Math.max(0, at - Date.now()))
      return signal
    }
  }
}
