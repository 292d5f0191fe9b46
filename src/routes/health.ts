import { basename } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { dataEnvelope, errorResponses } from '../schemas/envelope.ts'
import { Type } from '../typebox.ts'
import { OPERATIONS } from '../catalogue/operations.ts'

const LiveSchema = dataEnvelope(
  Type.Object(
    { status: Type.Literal('ok', { description: 'The process is up' }) },
    { additionalProperties: false }
  ),
  'Liveness'
)
const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const

/** The circuits of one upstream: one per operation sent there. */
function circuitsOf (service: 'hub' | 'base', address: string) {
  const ops = OPERATIONS.filter(op => op.service === service)
  return Type.Object(
    Object.fromEntries(
      ops.map((op) => [
        op.id,
        Type.Enum(CIRCUIT_STATES, {
          description: `Circuit of \`${op.id}\`: open while the gateway answers it with ` +
            'UPSTREAM_UNAVAILABLE at once'
        })
      ])
    ),
    { additionalProperties: false, description: `Circuit state per operation of ${address}` }
  )
}

const ReadySchema = dataEnvelope(
  Type.Object(
    {
      status: Type.Literal('ready', { description: 'Serving' }),
      upstreams: Type.Object(
        {
          hub: circuitsOf('hub', "the hub's lookup address"),
          base: circuitsOf('base', "the hub's SP2 and booking address")
        },
        {
          additionalProperties: false,
          description: 'Circuit breaker state per upstream address and operation'
        }
      ),
      sandbox: Type.Boolean({ description: 'True when the gateway fronts its built-in sandbox' }),
      profile: Type.Object(
        {
          name: Type.String({ description: "The hub profile's name" }),
          source: Type.String({ description: '`built-in`, or the file name of the profile' }),
          digest: Type.String({
            description:
              'A short hash of what the profile in force makes the gateway do: replicas with the ' +
              'same digest call the hub alike'
          })
        },
        {
          additionalProperties: false,
          description:
            'The hub profile in force: how the gateway addresses, authenticates and reads the ' +
            'hub (the start-up log shows it whole)'
        }
      ),
      redis: Type.Optional(
        Type.Enum(['up', 'down', 'refusing-writes'], {
          description:
            'Present when the gateway runs as replicas sharing a Redis: whether that Redis ' +
            'answers (`up`, `down`), or answers but refuses to store anything ' +
            '(`refusing-writes`: out of memory under noeviction, a replica left behind by a ' +
            'failover). Neither makes the gateway unready: each use of Redis degrades instead ' +
            '(writes with an Idempotency-Key are refused with 503 IDEMPOTENCY_UNAVAILABLE), and ' +
            'the gateway reconnects by itself'
        })
      )
    },
    { additionalProperties: false }
  ),
  'Readiness'
)

/** A few lines of what GET /metrics answers (its numbers change with every request). */
const METRICS_EXAMPLE = [
  '# HELP gateway_http_requests_total Requests answered, by method, route template and status code',
  '# TYPE gateway_http_requests_total counter',
  'gateway_http_requests_total{method="GET",' +
    'route="/v1/customs/bc20/bills-of-lading",status_code="200"} 42',
  '# HELP gateway_upstream_requests_total Hub calls, by operation and outcome',
  '# TYPE gateway_upstream_requests_total counter',
  'gateway_upstream_requests_total{operation="noblbc20",outcome="ok"} 40',
  ''
].join('\n')

/**
 * Liveness, readiness and Prometheus metrics; public: no credentials needed, never rate limited.
 */
export default async function healthRoutes (
  app: FastifyInstance,
  { sandbox }: { sandbox: boolean }
) {
  app.get(
    '/health/live',
    {
      config: { scope: null },
      schema: {
        tags: ['operations'],
        summary: 'Liveness',
        operationId: 'getHealthLive',
        description: 'The process is up and its event loop turns.',
        response: { 200: LiveSchema }
      }
    },
    async () => ({ data: { status: 'ok' as const }, meta: {} })
  )

  const { name, source, digest } = app.hub.profile
  const profile = { name, source: source === 'built-in' ? source : basename(source), digest }

  app.get(
    '/health/ready',
    {
      config: { scope: null },
      schema: {
        tags: ['operations'],
        summary: 'Readiness',
        operationId: 'getHealthReady',
        description:
          'Ready once configuration is loaded and every plugin started; 503 SHUTTING_DOWN while ' +
          'closing. Shows the circuit of every hub operation and the hub profile in force. An ' +
          'open circuit does not make the gateway unready: it still answers, fast, from cache or ' +
          'with UPSTREAM_UNAVAILABLE. Nor does an outage of the Redis that replicas share: ' +
          '`data.redis` reports it.',
        // Load shedding spares only liveness and the metrics (plugins/pressure.ts).
        response: {
          200: ReadySchema,
          ...errorResponses([503], { codes: ['OVERLOADED', 'SHUTTING_DOWN'] })
        }
      }
    },
    async () => {
      const upstreams: Record<'hub' | 'base', Record<string, string>> = { hub: {}, base: {} }
      for (const { upstream, operation, state } of app.hub.circuits()) {
        upstreams[upstream][operation] = state
      }
      const redis = app.state.redis?.health()
      return {
        data: {
          status: 'ready' as const,
          upstreams,
          sandbox,
          profile,
          ...(redis === undefined ? {} : { redis })
        },
        meta: {}
      }
    }
  )

  // With METRICS_PORT, /metrics is served on its own listener (server.ts), not here.
  if (app.config.METRICS_PORT !== undefined) return
  app.get(
    '/metrics',
    {
      config: { scope: null },
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics',
        operationId: 'getMetrics',
        description:
          'Prometheus text format: requests by route template and status code, hub calls by ' +
          'operation and outcome, latency histograms, circuit states, the lookup cache, ' +
          'idempotency keys and replays, event sockets, rate-limited requests per client, hub ' +
          'logins, hub answers read by the slow path (gateway_upstream_slow_path_total), process ' +
          'metrics. Not served here when the deployment serves metrics on a separate port.',
        response: {
          200: {
            description: 'Prometheus text exposition',
            content: { 'text/plain': { schema: Type.String({ examples: [METRICS_EXAMPLE] }) } }
          },
          ...errorResponses([500]),
          // Closing spares only liveness (plugins/lifecycle.ts).
          ...errorResponses([503], { codes: ['SHUTTING_DOWN'] })
        }
      }
    },
    async (_request, reply) => {
      reply.type(app.metrics.registry.contentType)
      return app.metrics.registry.metrics()
    }
  )
}
