import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { gatewayError } from '../errors.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** True once the app has begun to close. */
    readonly closing: boolean
  }
}

/**
 * While the app closes, requests still arriving on open connections get a 503
 * SHUTTING_DOWN in the envelope (with `connection: close`), readiness
 * included; liveness still answers 200: the process is up.
 */
async function lifecycle (app: FastifyInstance) {
  let closing = false
  app.decorate('closing', { getter: () => closing })
  app.addHook('preClose', async () => { closing = true })
  // Connections still open when closing starts end after their answer, so that
  // close() does not wait out the keep-alive timeout of idle sockets.
  // Callback hooks: they run on every request and nearly always do nothing.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('onRequest', (request, reply, done) => {
    if (closing && request.url !== '/health/live') {
      reply.header('connection', 'close')
      done(gatewayError('SHUTTING_DOWN', { retryAfter: '1' }))
      return
    }
    done()
  })
}

export default fp(lifecycle, { name: 'lifecycle' })
