// Stage `client-key`: every request is the bench's client; no hook, no hash.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { AuthenticatedClient, ClientRegistry } from '../../../src/auth/clients.ts'

const BENCH: AuthenticatedClient = {
  name: 'bench',
  scopes: ['customs:read', 'sp2:read'],
  events: 'own',
  rateLimit: { max: 1_000_000, timeWindowMs: 60_000 }
}
const REGISTRY: ClientRegistry = { size: 1, authenticate: () => BENCH, find: () => BENCH }

export default fp(async (app: FastifyInstance) => {
  app.decorate('clients', REGISTRY)
  app.decorateRequest('client', { getter: () => BENCH })
}, { name: 'clients' })
