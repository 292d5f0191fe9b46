import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Context, Span, TextMapPropagator, TextMapSetter } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { UndiciInstrumentation, type UndiciRequest } from '@opentelemetry/instrumentation-undici'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import { startNodeSdk } from '@opentelemetry/sdk-node'
import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest
} from 'fastify'
import fp from 'fastify-plugin'
import { AccessLog } from '../logging/access-log.ts'
import { safeTarget } from './safe-target.ts'

/**
 * Tracing with the OpenTelemetry SDK for Node, loaded by server.ts only when
 * the OTEL_* variables ask for it (config/tracing.ts): this module and the
 * SDK are never imported otherwise. The SDK reads the standard variables
 * itself (exporter, endpoint, protocol, headers, service name, sampler,
 * resource attributes, batch settings). Spans come from Fastify's own
 * instrumentation (@fastify/otel: one span per request) and undici's (one
 * per HTTP exchange with the hub); the hub client adds a span per hub call
 * and per attempt (upstream/).
 *
 * What a span may carry (docs/operations.md, "Traces"): route templates,
 * never the address asked (it holds NPWPs, BL and booking numbers); client
 * names, never keys; no header and no body. Addresses of hub calls are
 * reduced to their operation's template and their query values replaced by
 * REDACTED (as the semantic conventions do for signed URLs).
 */

export interface Tracing {
  /**
   * Registered on the root instance before the gateway: request spans, and the trace ids bound to
   * request logs.
   */
  plugin: (app: FastifyInstance) => Promise<void>
  /**
   * The request logging (logging/access-log.ts), its `incoming request` line written once the span
   * exists.
   */
  logController: AccessLog
  /** Ends the spans in flight and sends what is left (on shutdown). */
  shutdown (): Promise<void>
}

export interface TracingOptions {
  serviceVersion: string
  /** UPSTREAM_TRACE_PROPAGATION: whether the hub receives `traceparent`. */
  propagateUpstream: boolean
  /** Fastify's requestIdLogLabel, as app.ts sets it. */
  requestIdLogLabel: string
}

/**
 * W3C trace context (traceparent, tracestate) only: `baggage` is not
 * propagated, since a caller's baggage would otherwise be passed on to the
 * hub. Extracting (an incoming traceparent continues the caller's trace)
 * always works; injecting, which only calls to the hub do (every outgoing
 * HTTP call of the gateway goes to the hub), only with
 * UPSTREAM_TRACE_PROPAGATION: undici's instrumentation injects into every
 * request it sees.
 */
export function gatewayPropagator (propagateUpstream: boolean): TextMapPropagator {
  const w3c = new W3CTraceContextPropagator()
  return {
    inject (context: Context, carrier: unknown, setter: TextMapSetter) {
      if (propagateUpstream) w3c.inject(context, carrier, setter)
    },
    extract: (context, carrier, getter) => w3c.extract(context, carrier, getter),
    fields: () => w3c.fields()
  }
}

/** The request span's name and the attributes @fastify/otel set from the address asked. */
function nameRequestSpan (span: Span, request: FastifyRequest): void {
  const route = request.routeOptions.url
  span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
  // @fastify/otel records url.path as the address asked, query string included.
  span.setAttribute('url.path', route ?? 'unmatched')
}

/**
 * The gateway's request logging, but the `incoming request` line (debug) is
 * written by the tracing plugin's onRequest hook, after the request's span
 * is started, so that it carries `traceId` and `spanId` like every later line.
 */
class TracedLogController extends AccessLog {
  override incomingRequest (): void {}
  traced (request: FastifyRequest, reply: FastifyReply): void {
    super.incomingRequest(request, reply)
  }
}

export function startTracing ({
  serviceVersion,
  propagateUpstream,
  requestIdLogLabel
}: TracingOptions): Tracing {
  const fastifyInstrumentation = new FastifyOtelInstrumentation({
    // One span for the request and one for its handler; a span per hook
    // (twenty on a write) would bury the hub calls.
    instrumentHooks: false,
    requestHook: nameRequestSpan
  })
  const undiciInstrumentation = new UndiciInstrumentation({
    startSpanHook: (request: UndiciRequest) => safeTarget(request.origin, request.path),
    // No span outside a request (the token renewal of login mode runs on its own timer).
    requireParentforSpans: true
  })
  const sdk = startNodeSdk({
    instrumentations: [fastifyInstrumentation, undiciInstrumentation],
    propagators: [gatewayPropagator(propagateUpstream)],
    // The environment's service name and resource attributes go over these.
    baseResource: defaultResource().merge(
      resourceFromAttributes({
        'service.name': 'customs-gateway',
        'service.version': serviceVersion
      })
    ),
    // Traces only: metrics are Prometheus's (GET /metrics), logs are pino's.
    metricReaders: [],
    logRecordProcessors: []
  })
  const logController = new TracedLogController({ requestIdLogLabel })

  async function plugin (app: FastifyInstance) {
    await app.register(fastifyInstrumentation.plugin())
    app.addHook('onRequest', (request, reply, done) => {
      const { span } = request.opentelemetry()
      if (span != null) {
        const { traceId, spanId } = span.spanContext()
        request.log = request.log.child({ traceId, spanId })
        reply.log = request.log
      }
      logController.traced(request, reply)
      done()
    })
    // Who called, once authentication has said so (the span starts before it).
    app.addHook('onSend', (request, _reply, payload, done) => {
      request
        .opentelemetry()
        .span?.setAttribute('gateway.client', request.client?.name ?? 'anonymous')
      done(null, payload)
    })
  }

  return {
    plugin: fp(plugin, { name: 'tracing' }),
    logController,
    shutdown: () => sdk.shutdown()
  }
}
