import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { GatewayConfig } from '../config/resolve.ts'
import type { Outcome } from '../upstream/failures.ts'

export interface Metrics {
  registry: Registry
  observeUpstream (operation: string, outcome: Outcome, seconds: number): void
  /** A 2xx hub answer took the reference path: the transcoder gave up on it. */
  countSlowPath (operation: string): void
  /**
   * A hub answer needed a tolerance of this kind (mapping/drift.ts): what the hub sent beyond its
   * documented forms.
   */
  countDrift (operation: string, kind: string): void
  /** An event subscriber was closed for not reading its messages (EVENTS_MAX_BUFFERED_BYTES). */
  countDroppedSubscriber (): void
  /** A login to the hub (UPSTREAM_CREDENTIALS=login), by how it went. */
  countLogin (outcome: 'ok' | 'failed'): void
  /** A renewal of the hub token by its refresh token (at login.refreshPath), by how it went. */
  countRefresh (outcome: 'ok' | 'refused' | 'failed'): void
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/** Requests answered with one method, route and status since the last scrape. */
interface AnsweredSeries {
  readonly labels: { method: string, route: string, status_code: number }
  count: number
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Circuit states as label values (Prometheus label values by convention: `half_open`). */
const CIRCUIT_STATES = { closed: 'closed', open: 'open', 'half-open': 'half_open' } as const

/**
 * Prometheus metrics (prom-client), one registry per app instance so that
 * several apps in one process (tests) never share counters. Names and labels
 * follow Prometheus's conventions; every label value comes from a bounded
 * set (route templates, operations, outcomes, status codes, client names of
 * CLIENTS_FILE), never from a request's values. docs/operations.md lists
 * them all, with the alerts and the dashboard built on them.
 *
 * The gauges of other parts (circuits, cache, idempotency store, event
 * sockets) are read when Prometheus scrapes, from the decorators those
 * parts register after this plugin.
 */
async function metrics (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  // Counted here per request and handed to prom-client when scraped: its inc() hashes the
  // labels on every call, a cost every request paid; three Map lookups allocate nothing.
  const answered = new Map<string, Map<string, Map<number, AnsweredSeries>>>()
  registry.registerMetric(new Counter({
    name: 'gateway_http_requests_total',
    help: 'Requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'],
    registers: [],
    collect () {
      for (const methods of answered.values()) {
        for (const statuses of methods.values()) {
          for (const series of statuses.values()) {
            if (series.count === 0) continue
            this.inc(series.labels, series.count)
            series.count = 0
          }
        }
      }
    }
  }))
  const countAnswered = (method: string, route: string, statusCode: number): void => {
    let methods = answered.get(route)
    if (methods === undefined) answered.set(route, methods = new Map())
    let statuses = methods.get(method)
    if (statuses === undefined) methods.set(method, statuses = new Map())
    const series = statuses.get(statusCode)
    if (series !== undefined) series.count++
    else statuses.set(statusCode, { labels: { method, route, status_code: statusCode }, count: 1 })
  }
  const requestSeconds = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Request latency, by method and route template',
    labelNames: ['method', 'route'],
    buckets: BUCKETS,
    registers
  })
  const rateLimited = new Counter({
    name: 'gateway_rate_limited_total',
    help: 'Requests refused with 429 RATE_LIMITED (requests per window, hub calls in flight, ' +
      'event sockets), by client name (`anonymous` without authentication)',
    labelNames: ['client'],
    registers
  })
  const upstreamCalls = new Counter({
    name: 'gateway_upstream_requests_total',
    help: 'Hub calls, by operation and outcome (cached and stale: answered by the lookup cache)',
    labelNames: ['operation', 'outcome'],
    registers
  })
  const upstreamSeconds = new Histogram({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'Hub call latency, by operation and outcome',
    labelNames: ['operation', 'outcome'],
    buckets: BUCKETS,
    registers
  })
  const slowPath = new Counter({
    name: 'gateway_upstream_slow_path_total',
    help: 'Successful hub answers the byte transcoder gave up on (unusual shape, escapes, drift, ' +
      'bad values) and the parse-and-normalize path read instead, by operation',
    labelNames: ['operation'],
    registers
  })
  const drift = new Counter({
    name: 'gateway_hub_drift_total',
    help: 'Hub answers the gateway read beyond their documented forms, by operation and kind: ' +
      'number-string, flag-string, null-string, date-form, ' +
      'answer-key (the list under another key), ' +
      'error-field (error text not in message), failure-2xx (a 2xx answer reporting a failure), ' +
      'invalid-value (a value its field cannot hold, answered as null or left out). ' +
      'The first of each operation and kind is logged',
    labelNames: ['operation', 'kind'],
    registers
  })
  const cacheLookups = new Counter({
    name: 'gateway_cache_lookups_total',
    help: 'GET lookups by how the lookup cache answered them: hit (a fresh answer, or one joined ' +
      'in flight), stale (an old answer served because the hub failed), miss (a hub call)',
    labelNames: ['operation', 'result'],
    registers
  })
  const logins = new Counter({
    name: 'gateway_hub_logins_total',
    help: 'Logins to the hub (UPSTREAM_CREDENTIALS=login), by outcome',
    labelNames: ['outcome'],
    registers
  })
  const refreshes = new Counter({
    name: 'gateway_hub_token_refreshes_total',
    help: 'Renewals of the hub token by its refresh token (the hub profile\'s ' +
      'login.refreshPath), by outcome: ok, refused (a login follows), failed',
    labelNames: ['outcome'],
    registers
  })
  const replays = new Counter({
    name: 'gateway_idempotency_replays_total',
    help: 'Writes answered again from the idempotency store (Idempotency-Key), by route template',
    labelNames: ['route'],
    registers
  })
  const dropped = new Counter({
    name: 'gateway_events_dropped_total',
    help: 'Event sockets closed (1008) because their reader fell EVENTS_MAX_BUFFERED_BYTES behind',
    registers
  })

  registry.registerMetric(
    new Gauge({
      registers: [],
      name: 'gateway_upstream_circuit_state',
      help: 'Circuit breaker state per upstream address (hub, base) and operation: 1 for the ' +
        'state it is in, 0 for the others',
      labelNames: ['upstream', 'operation', 'state'],
      collect () {
        if (!app.hasDecorator('hub')) return
        for (const { upstream, operation, state } of app.hub.circuits()) {
          for (const [name, label] of Object.entries(CIRCUIT_STATES)) {
            this.set({ upstream, operation, state: label }, name === state ? 1 : 0)
          }
        }
      }
    })
  )
  const cacheGauge = (
    name: string,
    help: string,
    read: (usage: { entries: number; bytes: number; failures: number }) => number
  ) =>
    new Gauge({
      name,
      help,
      registers,
      collect () {
        if (app.hasDecorator('hub')) this.set(read(app.hub.cacheUsage()))
      }
    })
  cacheGauge('gateway_cache_entries', 'Lookups held in the lookup cache', usage => usage.entries)
  cacheGauge(
    'gateway_cache_bytes',
    "Memory charged to the lookup cache's entries, in bytes (budget: CACHE_MAX_BYTES)",
    (usage) => usage.bytes
  )
  cacheGauge(
    'gateway_cache_failures',
    'Hub failures the lookup cache remembers for CACHE_FAILURE_SECONDS',
    (usage) => usage.failures
  )
  registry.registerMetric(new Gauge({
    registers: [],
    name: 'gateway_cache_max_bytes',
    help: 'The lookup cache\'s memory budget, in bytes (CACHE_MAX_BYTES)',
    collect () { this.set(config.CACHE_MAX_BYTES) }
  }))
  registry.registerMetric(new Gauge({
    registers: [],
    name: 'gateway_idempotency_entries',
    help: 'Idempotency keys held (in flight or answered); with Redis, those of every replica',
    async collect () {
      if (!app.hasDecorator('state')) return
      try {
        this.set(await app.state.idempotency.size())
      } catch {
        // Redis unreachable: the last value stands, and the Redis gauge says why.
      }
    }
  }))
  registry.registerMetric(new Gauge({
    registers: [],
    name: 'gateway_idempotency_unsettled',
    help: 'Outcomes of idempotent writes (answers, unknown outcomes, freed keys) the shared ' +
      'store has not taken yet: written as soon as it answers again',
    collect () {
      if (app.hasDecorator('state')) this.set(app.state.idempotency.pending())
    }
  }))
  const flushes = new Histogram({
    name: 'gateway_idempotency_flush_seconds',
    help: 'Outcomes of idempotent writes that waited for Redis: from Redis answering again ' +
      'to the last of them stored',
    buckets: BUCKETS,
    registers
  })
  app.state.idempotency.onFlush?.((ms) => flushes.observe(ms / 1000))
  registry.registerMetric(new Gauge({
    registers: [],
    name: 'gateway_events_connections',
    help: 'Event sockets (GET /v1/events) open on this instance',
    collect () {
      if (app.hasDecorator('events')) this.set(app.events.size)
    }
  }))
  registry.registerMetric(new Gauge({
    registers: [],
    name: 'gateway_events_connections_limit',
    help: 'Event sockets this instance holds at most (EVENTS_MAX_CONNECTIONS)',
    collect () { this.set(config.EVENTS_MAX_CONNECTIONS) }
  }))

  // The GET operations (lookups, which the cache answers), once the hub client is there.
  let getOperations: Set<string> | undefined
  const lookups = (): Set<string> => {
    getOperations ??= new Set(
      [...app.hub.operations.values()].filter((op) => op.method === 'GET').map((op) => op.id)
    )
    return getOperations
  }

  // Only with REDIS_URL set: read when scraped.
  const redis = app.state.redis
  if (redis !== undefined) {
    registry.registerMetric(
      new Gauge({
        name: 'gateway_redis_up',
        help: 'Whether the Redis the replicas share answers and takes writes (1) or not (0: ' +
          'down, or refusing writes: full, read-only)',
        registers: [],
        collect () {
          this.set(redis.health() === 'up' ? 1 : 0)
        }
      })
    )
  }

  app.decorate('metrics', {
    registry,
    observeUpstream (operation, outcome, seconds) {
      upstreamCalls.inc({ operation, outcome })
      upstreamSeconds.observe({ operation, outcome }, seconds)
      if (lookups().has(operation)) {
        cacheLookups.inc({
          operation,
          result: outcome === 'cached' ? 'hit' : outcome === 'stale' ? 'stale' : 'miss'
        })
      }
    },
    countSlowPath (operation) {
      slowPath.inc({ operation })
    },
    countDrift (operation, kind) {
      drift.inc({ operation, kind })
    },
    countDroppedSubscriber () {
      dropped.inc()
    },
    countRefresh (outcome) {
      refreshes.inc({ outcome })
    },
    countLogin (outcome) {
      logins.inc({ outcome })
    }
  } satisfies Metrics)

  // A callback hook, run by every request: an async one costs a promise each time.
  app.addHook('onResponse', (request, reply, done) => {
    // Unmatched URLs share one label so that scanners cannot grow the series.
    const route = request.routeOptions.url ?? 'unmatched'
    countAnswered(request.method, route, reply.statusCode)
    requestSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000)
    // Every 429 the gateway answers is RATE_LIMITED (docs/api.md#the-envelope-and-errors).
    if (reply.statusCode === 429) rateLimited.inc({ client: request.client?.name ?? 'anonymous' })
    if (request.writeAttempt?.replayed === true) replays.inc({ route })
    done()
  })
}

export default fp(metrics, { name: 'metrics', dependencies: ['state'] })
