import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/resolve.ts'
import { gatewayError } from '../errors.ts'

/** Routes that must answer even under load: probes and scrapes. */
const EXEMPT = new Set(['/health/live', '/metrics'])

/** The shortest sampling window: memory is read this often at most. */
const MIN_SAMPLE_INTERVAL_MS = 100

/**
 * Load shedding (@fastify/under-pressure): when the event loop lags or memory
 * runs high, requests get 503 OVERLOADED in the envelope with `retry-after`.
 *
 * The event-loop reading is the mean delay over one sampling window, and a
 * window in which the loop never turned reads as Infinity (the plugin's own
 * rule). So the window is as long as the threshold: only a loop stuck for the
 * whole threshold reads as over it. A shorter window would shed after any
 * single pause longer than the window (a start-up's compilation, one long
 * collection), whatever PRESSURE_MAX_EVENT_LOOP_DELAY_MS says.
 */
async function pressure (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  await app.register(underPressure, {
    maxEventLoopDelay: config.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.PRESSURE_MAX_HEAP_USED_BYTES,
    maxRssBytes: config.PRESSURE_MAX_RSS_BYTES,
    sampleInterval: Math.max(MIN_SAMPLE_INTERVAL_MS, config.PRESSURE_MAX_EVENT_LOOP_DELAY_MS),
    pressureHandler: async (request, _reply, type, value) => {
      if (EXEMPT.has(request.url)) return
      request.log.warn({ type, value }, 'shedding load')
      throw gatewayError('OVERLOADED', { retryAfter: '5' })
    }
  })
}

export default fp(pressure, { name: 'pressure' })
