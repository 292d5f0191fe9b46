/**
 * The deadline step (UPSTREAM_DEADLINE_MS): the hub call's deadline starts
 * here, below the cache, so that a cache hit sets none. It bounds the whole
 * call: its retries, waits for a thread and the body budget included.
 */
import type { Policy } from '../call-path.ts'
import { startDeadline } from '../deadline.ts'

export function deadlinePolicy (ms: number): Policy {
  return (next) => (ctx) => {
    ctx.deadline = startDeadline(ms)
    return next(ctx)
  }
}
