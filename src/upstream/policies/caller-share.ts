/**
 * Each caller's share of the hub (UPSTREAM_MAX_CALLS_PER_CLIENT): one caller
 * cannot take every connection to the hub. Counted per client, or per
 * address without authentication.
 */
import { gatewayError } from '../../errors.ts'
import type { Fetched } from '../answer.ts'
import type { Call, CallContext, Policy } from '../call-path.ts'

/**
 * The caller's share step: a place among the caller's hub calls in flight
 * for the rest of the call, or RATE_LIMITED when it has its share of them
 * already. A call that starts no hub call of its own (`startsCall` says no:
 * the cache answers it, or it joins one in flight) needs none.
 */
export function callerSharePolicy (
  limit: number, startsCall: (ctx: CallContext) => boolean
): Policy {
  const inFlight = new Map<string, number>()

  async function holding (who: string, next: Call, ctx: CallContext): Promise<Fetched> {
    try {
      return await next(ctx)
    } finally {
      const left = (inFlight.get(who) ?? 1) - 1
      if (left === 0) inFlight.delete(who)
      else inFlight.set(who, left)
    }
  }

  return (next) => (ctx) => {
    const { caller } = ctx
    const name = caller.client?.name ?? caller.ip
    if (limit === 0 || name === undefined || !startsCall(ctx)) return next(ctx)
    const who = caller.client != null ? `client ${name}` : `address ${name}`
    const count = inFlight.get(who) ?? 0
    if (count >= limit) {
      const operation = ctx.op.id
      ctx.log.info({ operation, inFlight: count }, 'caller has too many hub calls in flight')
      return Promise.reject(gatewayError('RATE_LIMITED', { retryAfter: '1' }))
    }
    inFlight.set(who, count + 1)
    return holding(who, next, ctx)
  }
}
