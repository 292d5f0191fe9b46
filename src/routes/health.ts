import type { FastifyInstance } from 'fastify'
import { dataEnvelope, errorResponses } from '../schemas/envelope.ts'
import { Type } from '../schemas/typebox.ts'

const LiveSchema = dataEnvelope(Type.Object({ status: Type.Literal('ok', { description: 'The process is up' }) }, { additionalProperties: false }), 'Liveness')
const ReadySchema = dataEnvelope(Type.Object({
  status: Type.Enum(['ready', 'closing'], { description: '`ready` while serving; `closing` during shutdown' }),
  sandbox: Type.Boolean({ description: 'True when the gateway fronts its built-in sandbox' })
}, { additionalProperties: false }), 'Readiness')

/** Liveness, readiness and Prometheus metrics; no credentials needed. */
export default async function healthRoutes (app: FastifyInstance, { sandbox }: { sandbox: boolean }) {
  app.get('/health/live', {
    schema: { tags: ['operations'], summary: 'Liveness', operationId: 'getHealthLive', description: 'The process is up and its event loop turns.', response: { 200: LiveSchema } }
  }, async () => ({ data: { status: 'ok' as const }, meta: {} }))

  app.get('/health/ready', {
    schema: {
      tags: ['operations'],
      summary: 'Readiness',
      operationId: 'getHealthReady',
      description: 'Ready once configuration is loaded and every plugin started; 503 while shutting down.',
      response: { 200: ReadySchema, 503: ReadySchema }
    }
  }, async (_request, reply) => {
    if (app.closing) return reply.code(503).send({ data: { status: 'closing', sandbox }, meta: {} })
    return { data: { status: 'ready', sandbox }, meta: {} }
  })

  app.get('/metrics', {
    schema: {
      tags: ['operations'],
      summary: 'Prometheus metrics',
      operationId: 'getMetrics',
      description: 'Prometheus text format: requests by route and status, hub calls by operation and outcome, latency histograms, process metrics.',
      response: {
        200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: Type.String() } } },
        ...errorResponses([500])
      }
    }
  }, async (_request, reply) => {
    reply.type(app.metrics.registry.contentType)
    return app.metrics.registry.metrics()
  })
}
