import fp from 'fastify-plugin'
import underPressure, { TYPE_EVENT_LOOP_DELAY } from '@fastify/under-pressure'
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
  const sampleInterval = Math.max(MIN_SAMPLE_INTERVAL_MS, config.PRESSURE_MAX_EVENT_LOOP_DELAY_MS)
  // The start-up's own stretches (loading and compiling modules, on a busy
  // machine over a second) fall in the sampler's first windows: for two
  // windows after the gateway is ready, the loop's reading is its past, not
  // a load to shed. Memory readings count from the start.
  const startUpGraceMs = 2 * sampleInterval
  let readyAt = Number.POSITIVE_INFINITY
  app.addHook('onReady', async () => { readyAt = performance.now() })
  await app.register(underPressure, {
    maxEventLoopDelay: config.PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.PRESSURE_MAX_HEAP_USED_BYTES,
    maxRssBytes: config.PRESSURE_MAX_RSS_BYTES,
    sampleInterval,
    pressureHandler: async (request, _reply, type, value) => {
      if (EXEMPT.has(request.url)) return
      if (type === TYPE_EVENT_LOOP_DELAY && performance.now() - readyAt < startUpGraceMs) return
      request.log.warn({ type, value }, 'shedding load')
      throw gatewayError('OVERLOADED', { retryAfter: '5' })
    }
  })
}

export default fp(pressure, { name: 'pressure' })
