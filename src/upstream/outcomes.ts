import { reasonOf, upstreamStatusOf } from '../errors.ts'
import type { OperationId } from '../catalogue/operations.ts'
import type { Policy } from './call-path.ts'
import { outcomeOf, type Outcome } from './failures.ts'

/** Called once per call with its outcome and duration, for metrics. */
export type ObserveCall = (operation: OperationId, outcome: Outcome, seconds: number) => void

function secondsSince (started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9
}

/**
 * The outcome step: each call's outcome and duration (`observe`, for
 * metrics), the hub's status noted on the caller (audit lines), and a
 * failed call logged with the cause under the contract's error.
 */
export function outcomePolicy (observe?: ObserveCall): Policy {
  return (next) => async (ctx) => {
    const { op, caller } = ctx
    const started = process.hrtime.bigint()
    try {
      const fetched = await next(ctx)
      caller.upstreamStatus = fetched.upstreamStatus
      const { cache } = ctx
      const outcome = cache?.cached === true ? (cache.stale ? 'stale' : 'cached') : 'ok'
      observe?.(op.id, outcome, secondsSince(started))
      return fetched
    } catch (error) {
      const outcome = outcomeOf(error)
      const status = upstreamStatusOf(error)
      if (status !== undefined) caller.upstreamStatus = status
      observe?.(op.id, outcome, secondsSince(started))
      ctx.log.warn({ operation: op.id, outcome, err: reasonOf(error) }, 'upstream call failed')
      throw error
    }
  }
}
