import fp from 'fastify-plugin'
import websocket from '@fastify/websocket'
import type { FastifyInstance } from 'fastify'
import type { WebSocket } from 'ws'
import { selectProtocol } from '../auth/clients.ts'
import type { BookedEvent } from '../schemas/events.ts'

export interface EventHub {
  /** Subscribes a connected socket until it closes. */
  add (socket: WebSocket): void
  publish (event: BookedEvent): void
  readonly size: number
}

declare module 'fastify' {
  interface FastifyInstance {
    events: EventHub
  }
}

/** WebSocket close code 1001: the server is going away (RFC 6455 7.4.1). */
const GOING_AWAY = 1001

/**
 * In-process fan-out of booked notifications to WebSocket clients
 * (interface.md 6: a socket consumer receives the API-04 JSON).
 */
async function events (app: FastifyInstance) {
  const clients = new Set<WebSocket>()
  await app.register(websocket, {
    // Browsers cannot set Authorization on a WebSocket: they offer the subprotocols
    // `bearer` and their key (auth/clients.ts reads it); the handshake agrees on `bearer`
    // only, so the key is never echoed. ws calls handleProtocols after our hooks ran.
    options: { maxPayload: 4096, handleProtocols: selectProtocol },
    preClose (done) {
      for (const client of clients) client.close(GOING_AWAY, 'gateway shutting down')
      this.websocketServer.close(() => done())
    }
  })
  app.decorate('events', {
    add (socket) {
      clients.add(socket)
      socket.on('close', () => clients.delete(socket))
    },
    publish (event) {
      const payload = JSON.stringify(event)
      for (const client of clients) {
        if (client.readyState === client.OPEN) client.send(payload)
      }
    },
    get size () { return clients.size }
  } satisfies EventHub)
}

export default fp(events, { name: 'events' })
