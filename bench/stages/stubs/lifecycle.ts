// Stage `hooks`: the shutdown check's onRequest and onSend hooks left out.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

export default fp(async (app: FastifyInstance) => {
  app.decorate('closing', { getter: () => false })
}, { name: 'lifecycle' })
