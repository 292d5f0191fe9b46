import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api'
import { upstreamStatusOf } from '../errors.ts'
import { HUB_TARGET } from '../telemetry/safe-target.ts'
import type { CallContext, Policy } from './call-path.ts'
import { outcomeOf } from './failures.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

/**
 * The hub client's spans (docs/operations.md, "Traces"): one per hub call
 * (`hub noblbc20`) and, under it, one per attempt (`hub noblbc20 attempt`),
 * under which undici's instrumentation puts the HTTP exchange. Through the
 * OpenTelemetry API only, and only under a recording request span: with
 * tracing off (no SDK) or a request not sampled, a call makes no span at all
 * (a no-op span and its context were 1 % of a BL lookup's CPU).
 *
 * Attributes name the operation, never its values: operation, upstream
 * (hub or base), attempt number, cache result, circuit state, the hub's
 * status and the outcome.
 */
const tracer = trace.getTracer('customs-gateway/hub-client')

interface HubStatus { upstreamStatus?: number }

function ended (span: Span, value: HubStatus | undefined, error: unknown): void {
  const status = value?.upstreamStatus ?? upstreamStatusOf(error)
  if (status !== undefined) span.setAttribute('gateway.hub.status_code', status)
  if (error !== undefined) {
    const outcome = outcomeOf(error)
    span.setAttribute('gateway.hub.outcome', outcome)
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome })
  }
  span.end()
}

/** What a call's span records of its answer: how it relates to the cache. */
function describeCall ({ cache }: CallContext): Record<string, string> {
  if (cache === undefined) return {}
  return { 'gateway.hub.cache': cache.stale ? 'stale' : cache.cached ? 'hit' : 'miss' }
}

/**
 * The call's span step: the rest of the call in its span, with the state of
 * the operation's circuit (`circuitOf`) and, once done, the cache's answer.
 * Without a span it hands back the next call's own promise, with no promise
 * of its own around it.
 */
export function callSpanPolicy (circuitOf: (op: ResolvedOperation) => string): Policy {
  return (next) => (ctx) => {
    // Tracing off (no SDK), or a request not sampled: no span, not even a no-op one.
    const request = trace.getActiveSpan()
    if (request === undefined || !request.isRecording()) return next(ctx)
    const { op } = ctx
    return tracer.startActiveSpan(`hub ${op.id}`, async (span) => {
      if (!span.isRecording()) return await next(ctx)
      span.setAttributes({
        'gateway.hub.operation': op.id,
        'gateway.hub.upstream': op.service,
        'gateway.hub.circuit': circuitOf(op)
      })
      try {
        const fetched = await next(ctx)
        span.setAttributes(describeCall(ctx))
        ended(span, fetched, undefined)
        return fetched
      } catch (error) {
        ended(span, undefined, error)
        throw error
      }
    })
  }
}

/**
 * The attempt's span step: each attempt in its span, with its operation's
 * address template in the context for the HTTP span (telemetry/safe-target.ts).
 */
export function attemptSpanPolicy (templateOf: (op: ResolvedOperation) => string): Policy {
  return (next) => (ctx) => {
    const active = trace.getActiveSpan()
    if (active === undefined || !active.isRecording()) return next(ctx)
    const { op, attempt } = ctx
    const attributes = { 'gateway.hub.operation': op.id, 'gateway.hub.attempt': attempt }
    return tracer.startActiveSpan(`hub ${op.id} attempt`, { attributes }, async (span) => {
      try {
        const target = context.active().setValue(HUB_TARGET, templateOf(op))
        const fetched = await context.with(target, next, undefined, ctx)
        ended(span, fetched, undefined)
        return fetched
      } catch (error) {
        ended(span, undefined, error)
        throw error
      }
    })
  }
}
