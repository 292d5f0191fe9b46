/**
 * The deadline of one hub call (UPSTREAM_DEADLINE_MS): the whole call, its
 * retries, waits for a thread and the body budget included. It starts with
 * the hub call, so a cache hit sets no timer.
 */
export interface Deadline {
  /** When it passes (ms, Date.now's clock: the timer below runs on it too). */
  at: number
  /** Aborts when it passes. */
  signal: AbortSignal
}

export function startDeadline (ms: number): Deadline {
  return { at: Date.now() + ms, signal: AbortSignal.timeout(ms) }
}
