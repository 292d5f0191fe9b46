// Stage `metrics`: no-op counters, no onResponse hook (the registry stays for /metrics).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Registry } from 'prom-client'
import type { Metrics } from '../../../src/plugins/metrics.ts'

export default fp(async (app: FastifyInstance) => {
  const metrics: Metrics = {
    registry: new Registry(),
    observeUpstream () {},
    countSlowPath () {},
    countDrift () {},
    countDroppedSubscriber () {},
    countLogin () {},
    countRefresh () {}
  }
  app.decorate('metrics', metrics)
}, { name: 'metrics', dependencies: ['state'] })
