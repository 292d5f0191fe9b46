import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import websocket from '@fastify/websocket'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { GatewayConfig } from '../config/resolve.ts'
import { isWebSocketUpgrade, selectProtocol } from '../auth/clients.ts'
import { gatewayError } from '../errors.ts'
import type { GatewayEvent } from '../state/types.ts'

/** Who is subscribing: the authenticated client, or null when authentication is off. */
export interface Viewer { readonly name: string, readonly events: 'own' | 'all' }

export interface EventHub {
  /**
   * Refuses an upgrade before it happens when the gateway has
   * EVENTS_MAX_CONNECTIONS sockets open (503 OVERLOADED) or the caller
   * EVENTS_MAX_PER_CLIENT (429 RATE_LIMITED).
   */
  admit (request: FastifyRequest): void
  /** Subscribes a connected socket until it closes. */
  add (socket: WebSocket, request: FastifyRequest): void
  /**
   * Sends a booked notification, under a new id, through the state's event
   * bus to every subscriber allowed to see it (see mayView). `client`
   * decides who may see it and travels with it, but is not part of what
   * subscribers receive (see publicEvent).
   */
  publish (event: Omit<GatewayEvent, 'id'>): Promise<void>
  readonly size: number
}

declare module 'fastify' {
  interface FastifyInstance {
    events: EventHub
  }
}

/** WebSocket close codes (RFC 6455 7.4.1, IANA registry). */
const GOING_AWAY = 1001
const POLICY_VIOLATION = 1008
const TRY_AGAIN_LATER = 1013

/** What a subscriber receives (schemas/events.ts): the event without the internal fields. */
export function publicEvent ({ id, type, occurredAt, requestId, data }: Pick<GatewayEvent, 'id' | 'type' | 'occurredAt' | 'requestId' | 'data'>): string {
  return JSON.stringify({ id, type, occurredAt, requestId, data })
}

/** Whether `viewer` may see `event`: everyone without authentication; else its own writes' events, or all with `"events": "all"`. */
export function mayView (viewer: Viewer | null, event: Pick<GatewayEvent, 'client'>): boolean {
  return viewer === null || viewer.events === 'all' || viewer.name === event.client
}

interface Subscriber { viewer: Viewer | null, who: string, alive: boolean }

/**
 * Booked notifications to WebSocket clients (interface.md 6: a socket
 * consumer receives the API-04 JSON): what the state's event bus delivers
 * goes to this process's sockets. Bounded:
 * sockets in all and per client, a ping every EVENTS_PING_INTERVAL_MS (a
 * socket that has not answered the previous one is ended), and a
 * subscriber that does not read its messages is closed (1008) once
 * EVENTS_MAX_BUFFERED_BYTES wait for it.
 */
async function events (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  const subscribers = new Map<WebSocket, Subscriber>()
  const perCaller = new Map<string, number>()

  // Who the per-client cap counts: the client, or its address without authentication.
  const callerOf = (request: FastifyRequest): string => request.client === null ? `address ${request.ip}` : `client ${request.client.name}`

  function tooMany (who: string): 'all' | 'client' | undefined {
    if (subscribers.size >= config.EVENTS_MAX_CONNECTIONS) return 'all'
    if ((perCaller.get(who) ?? 0) >= config.EVENTS_MAX_PER_CLIENT) return 'client'
    return undefined
  }

  const pinger = setInterval(() => {
    for (const [socket, subscriber] of subscribers) {
      // No pong since the last ping: the peer is gone (or not reading at all).
      if (!subscriber.alive) {
        socket.terminate()
        continue
      }
      subscriber.alive = false
      socket.ping()
    }
  }, config.EVENTS_PING_INTERVAL_MS)
  pinger.unref()

  function deliver (event: GatewayEvent) {
    const payload = publicEvent(event)
    const size = Buffer.byteLength(payload)
    for (const [socket, { viewer }] of subscribers) {
      if (socket.readyState !== socket.OPEN || !mayView(viewer, event)) continue
      if (socket.bufferedAmount + size > config.EVENTS_MAX_BUFFERED_BYTES) {
        // A subscriber that does not read would hold every message in memory.
        socket.close(POLICY_VIOLATION, 'too slow: messages are not being read')
        app.metrics.countDroppedSubscriber()
        continue
      }
      socket.send(payload)
    }
  }
  const bus = app.state.events
  const unsubscribe = bus.subscribe(deliver)

  await app.register(websocket, {
    // Browsers cannot set Authorization on a WebSocket: they offer the subprotocols
    // `bearer` and their key (auth/clients.ts reads it); the handshake agrees on `bearer`
    // only, so the key is never echoed. ws calls handleProtocols after our hooks ran.
    options: { maxPayload: 4096, handleProtocols: selectProtocol },
    preClose (done) {
      clearInterval(pinger)
      unsubscribe()
      for (const socket of subscribers.keys()) socket.close(GOING_AWAY, 'gateway shutting down')
      this.websocketServer.close(() => done())
    }
  })

  app.decorate('events', {
    admit (request) {
      if (!isWebSocketUpgrade(request.headers)) return
      const refused = tooMany(callerOf(request))
      if (refused === 'all') throw gatewayError('OVERLOADED', { retryAfter: '10' })
      if (refused === 'client') throw gatewayError('RATE_LIMITED', { retryAfter: '10' })
    },
    add (socket, request) {
      const who = callerOf(request)
      // Upgrades admitted at the same moment may pass admit() together: the cap holds here too.
      if (tooMany(who) !== undefined) {
        socket.close(TRY_AGAIN_LATER, 'too many event connections')
        return
      }
      const subscriber: Subscriber = { viewer: request.client, who, alive: true }
      subscribers.set(socket, subscriber)
      perCaller.set(who, (perCaller.get(who) ?? 0) + 1)
      socket.on('pong', () => { subscriber.alive = true })
      socket.on('close', () => {
        subscribers.delete(socket)
        const left = (perCaller.get(who) ?? 1) - 1
        if (left === 0) perCaller.delete(who)
        else perCaller.set(who, left)
      })
    },
    publish: (event) => bus.publish({ id: randomUUID(), ...event }),
    get size () { return subscribers.size }
  } satisfies EventHub)
}

export default fp(events, { name: 'events', dependencies: ['state', 'metrics'] })
