// Stage `rate-limit`: no limiter; the not-found handler's preHandler does nothing.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

export default fp(async (app: FastifyInstance) => {
  app.decorate('rateLimit', () => async () => {})
}, { name: 'rate-limit', dependencies: ['clients', 'state'] })
