import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/resolve.ts'
import { gatewayError } from '../errors.ts'

/** Routes that must answer even under load: probes and scrapes. */
const EXEMPT = new Set(['/health/live', '/metrics'])

/**
 * Load shedding (@fastify/under-pressure): when the event loop lags or memory
 * runs high, requests get 503 OVERLOADED in the envelope with `retry-after`.
 */
async function pressure (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  await app.register(underPressure, {
    maxEventLoopDelay: config.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.PRESSURE_MAX_HEAP_USED_BYTES,
    maxRssBytes: config.PRESSURE_MAX_RSS_BYTES,
    sampleInterval: 100,
    pressureHandler: async (request, _reply, type, value) => {
      if (EXEMPT.has(request.url)) return
      request.log.warn({ type, value }, 'shedding load')
      throw gatewayError('OVERLOADED', { retryAfter: '5' })
    }
  })
}

export default fp(pressure, { name: 'pressure' })
