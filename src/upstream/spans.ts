import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api'
import { upstreamStatusOf } from '../errors.ts'
import { HUB_TARGET } from '../telemetry/safe-target.ts'
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

/**
 * Runs one hub call in its span. `describe` adds what is known once it is
 * done (the cache's answer). Not an async function: without a span it hands
 * back `run`'s own promise, with no promise of its own around it.
 */
export function inCallSpan<T extends HubStatus> (op: ResolvedOperation, circuit: string, run: () => Promise<T>, describe: (result: T) => Record<string, string>): Promise<T> {
  // Tracing off (no SDK), or a request not sampled: no span, not even a no-op one.
  const request = trace.getActiveSpan()
  if (request === undefined || !request.isRecording()) return run()
  return tracer.startActiveSpan(`hub ${op.id}`, async (span) => {
    if (!span.isRecording()) return run()
    span.setAttributes({ 'gateway.hub.operation': op.id, 'gateway.hub.upstream': op.service, 'gateway.hub.circuit': circuit })
    try {
      const result = await run()
      span.setAttributes(describe(result))
      ended(span, result, undefined)
      return result
    } catch (error) {
      ended(span, undefined, error)
      throw error
    }
  })
}

/**
 * Runs one attempt of a hub call in its span, with the address template
 * (`template`) in the context for the HTTP span (telemetry/safe-target.ts).
 */
export function inAttemptSpan<T extends HubStatus> (op: ResolvedOperation, attempt: number, template: string, run: () => Promise<T>): Promise<T> {
  const active = trace.getActiveSpan()
  if (active === undefined || !active.isRecording()) return run()
  return tracer.startActiveSpan(`hub ${op.id} attempt`, { attributes: { 'gateway.hub.operation': op.id, 'gateway.hub.attempt': attempt } }, async (span) => {
    try {
      const result = await context.with(context.active().setValue(HUB_TARGET, template), run)
      ended(span, result, undefined)
      return result
    } catch (error) {
      ended(span, undefined, error)
      throw error
    }
  })
}
