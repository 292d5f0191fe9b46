/**
 * Each caller's share of the hub (UPSTREAM_MAX_CALLS_PER_CLIENT): one caller
 * cannot take every connection to the hub. Counted per client, or per
 * address without authentication.
 */
import type { FastifyBaseLogger } from 'fastify'
import { gatewayError } from '../../errors.ts'
import type { ResolvedOperation } from '../resolve-operations.ts'

/** Who a call is for: its client, or without authentication its address. */
export interface ShareHolder {
  readonly client?: { name: string } | null
  readonly ip?: string
}

export interface CallerShare {
  /**
   * A place among the caller's hub calls in flight, or RATE_LIMITED when it
   * has its share of them already. A call that starts no hub call of its own
   * (`startsCall` says no: the cache answers it, or it joins one in flight)
   * needs none. Returns the release.
   */
  admit (op: ResolvedOperation, holder: ShareHolder, log: FastifyBaseLogger, startsCall: () => boolean): () => void
}

const NOTHING = (): void => {}

export function createCallerShare (limit: number): CallerShare {
  const inFlight = new Map<string, number>()
  return {
    admit (op, holder, log, startsCall) {
      const caller = holder.client?.name ?? holder.ip
      if (limit === 0 || caller === undefined) return NOTHING
      if (!startsCall()) return NOTHING
      const who = holder.client != null ? `client ${caller}` : `address ${caller}`
      const count = inFlight.get(who) ?? 0
      if (count >= limit) {
        log.info({ operation: op.id, inFlight: count }, 'caller has too many hub calls in flight')
        throw gatewayError('RATE_LIMITED', { retryAfter: '1' })
      }
      inFlight.set(who, count + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const left = (inFlight.get(who) ?? 1) - 1
        if (left === 0) inFlight.delete(who)
        else inFlight.set(who, left)
      }
    }
  }
}
