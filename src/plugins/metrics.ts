import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Outcome } from '../upstream/failures.ts'

export interface Metrics {
  registry: Registry
  observeUpstream (operation: string, outcome: Outcome, seconds: number): void
  /** A 2xx hub answer took the reference path: the transcoder gave up on it. */
  countSlowPath (operation: string): void
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/**
 * Prometheus metrics (prom-client), one registry per app instance so that
 * several apps in one process (tests) never share counters.
 */
async function metrics (app: FastifyInstance) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Counter({ name: 'gateway_http_requests_total', help: 'Requests answered, by route and status', labelNames: ['method', 'route', 'status'], registers: [registry] })
  const requestSeconds = new Histogram({ name: 'gateway_http_request_duration_seconds', help: 'Request latency, by route', labelNames: ['method', 'route'], buckets: BUCKETS, registers: [registry] })
  const upstreamCalls = new Counter({ name: 'gateway_upstream_requests_total', help: 'Hub calls, by operation and outcome', labelNames: ['operation', 'outcome'], registers: [registry] })
  const upstreamSeconds = new Histogram({ name: 'gateway_upstream_request_duration_seconds', help: 'Hub call latency, by operation and outcome', labelNames: ['operation', 'outcome'], buckets: BUCKETS, registers: [registry] })
  const slowPath = new Counter({
    name: 'gateway_upstream_slow_path_total',
    help: 'Successful hub answers the byte transcoder gave up on (unusual shape, escapes, drift, bad values) and the parse-and-normalize path read instead, by operation',
    labelNames: ['operation'],
    registers: [registry]
  })

  // Only with REDIS_URL set: read when scraped.
  const redis = app.state.redis
  if (redis !== undefined) {
    registry.registerMetric(new Gauge({ name: 'gateway_redis_up', help: 'Whether the Redis the replicas share answers (1) or not (0)', registers: [], collect () { this.set(redis.health() === 'up' ? 1 : 0) } }))
  }

  app.decorate('metrics', {
    registry,
    observeUpstream (operation, outcome, seconds) {
      upstreamCalls.inc({ operation, outcome })
      upstreamSeconds.observe({ operation, outcome }, seconds)
    },
    countSlowPath (operation) {
      slowPath.inc({ operation })
    }
  } satisfies Metrics)

  app.addHook('onResponse', async (request, reply) => {
    // Unmatched URLs share one label so that scanners cannot grow the series.
    const route = request.routeOptions.url ?? 'unmatched'
    requests.inc({ method: request.method, route, status: reply.statusCode })
    requestSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000)
  })
}

export default fp(metrics, { name: 'metrics', dependencies: ['state'] })
