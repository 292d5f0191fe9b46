import fp from 'fastify-plugin'
import { fastifySSE as sse } from '@fastify/sse'
import websocket from '@fastify/websocket'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { GatewayConfig } from '../config/resolve.ts'
import { isWebSocketUpgrade, selectProtocol } from '../auth/clients.ts'
import { gatewayError } from '../errors.ts'
import { compareEventIds } from '../state/event-ids.ts'
import type { GatewayEvent, LogEntry, NewEvent } from '../state/types.ts'

/** Who is subscribing: the authenticated client, or null when authentication is off. */
export interface Viewer { readonly name: string, readonly events: 'own' | 'all' }

/** Why a reader is told to reload (schemas/events.ts, StreamReload). */
export type ReloadReason = 'expired' | 'lost' | 'unavailable'

export interface EventHub {
  /**
   * Refuses a WebSocket upgrade before it happens when the gateway has
   * EVENTS_MAX_CONNECTIONS readers (sockets and streams) open (503
   * OVERLOADED) or the caller EVENTS_MAX_PER_CLIENT (429 RATE_LIMITED).
   */
  admit (request: FastifyRequest): void
  /**
   * Subscribes a connected socket until it closes: from `after` (an event id,
   * or `now`) with the resume messages (`stream.position`, `stream.reload`);
   * without, booked events only, as the first version of the route did.
   */
  add (socket: WebSocket, request: FastifyRequest, after: string | undefined): void
  /**
   * Turns the reply into an event stream (SSE) and subscribes it until it
   * closes, from `after` (an event id, or `now`: the default). Throws the caps' errors (as admit)
   * before anything is sent.
   */
  stream (reply: FastifyReply, request: FastifyRequest, after: string | undefined): void
  /**
   * Appends a booked notification to the event log, which gives it its id;
   * each reader allowed to see it (see mayView) gets it. `client` decides
   * who may see it and travels with it, but is not part of what readers
   * receive (see publicEvent).
   */
  publish (event: NewEvent): Promise<void>
  /** Readers (sockets and streams) open on this instance. */
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

/** What a reader receives (schemas/events.ts): the event without the internal fields. */
export function publicEvent ({
  id,
  type,
  occurredAt,
  requestId,
  data
}: Pick<GatewayEvent, 'id' | 'type' | 'occurredAt' | 'requestId' | 'data'>): string {
  return JSON.stringify({ id, type, occurredAt, requestId, data })
}

/**
 * Whether `viewer` may see `event`: everyone without authentication; else its own writes' events,
 * or all with `"events": "all"`.
 */
export function mayView (viewer: Viewer | null, event: Pick<GatewayEvent, 'client'>): boolean {
  return viewer === null || viewer.events === 'all' || viewer.name === event.client
}

/** How one kind of connection carries the messages. */
interface Sink {
  /** Bytes written and not yet taken by the peer. */
  buffered (): number
  /** A message of `type` (a JSON object with `id`), which moves the reader's position to `id`. */
  message (type: string, id: string, json: string): void
  /** The reader's position moves to `id`, without a message for it. */
  position (id: string): void
  /** The reader does not keep up: dropped (it resumes from its last id when it comes back). */
  dropSlow (): void
  /** The gateway is closing. */
  goAway (): void
  /** The heartbeat tick: false when the peer is gone. */
  tick (): boolean
}

interface Reader {
  viewer: Viewer | null
  who: string
  sink: Sink
  /** While it is being sent what it missed: what arrives meanwhile waits here. */
  pending: LogEntry[] | undefined
  /** The last id it has been sent or passed over. */
  last: string
  /** The last id it was told (an event's, a reload's or a position). */
  told: string
  /**
   * Whether it is told positions and reloads (it resumes); the first WebSocket protocol had events
   * only.
   */
  resumes: boolean
}

function webSocketSink (socket: WebSocket): Sink {
  let alive = true
  socket.on('pong', () => { alive = true })
  return {
    buffered: () => socket.bufferedAmount,
    message (_type, _id, json) { socket.send(json) },
    position (id) { socket.send(JSON.stringify({ type: 'stream.position', id })) },
    dropSlow () { socket.close(POLICY_VIOLATION, 'too slow: messages are not being read') },
    goAway () { socket.close(GOING_AWAY, 'gateway shutting down') },
    tick () {
      // No pong since the last ping: the peer is gone (or not reading at all).
      if (!alive) {
        socket.terminate()
        return false
      }
      alive = false
      socket.ping()
      return true
    }
  }
}

function eventStreamSink (reply: FastifyReply): Sink {
  const raw = reply.raw
  return {
    buffered: () => raw.writableLength,
    // JSON.stringify never writes a line break, so that each message is one `data:` line.
    message (type, id, json) { raw.write(`id: ${id}\nevent: ${type}\ndata: ${json}\n\n`) },
    // An `id:` without data moves EventSource's lastEventId and dispatches nothing.
    position (id) { raw.write(`id: ${id}\n\n`) },
    dropSlow () { raw.destroy() },
    goAway () { reply.sse.close() },
    // @fastify/sse writes the heartbeat comments.
    tick: () => !raw.destroyed
  }
}

/**
 * Booked notifications to readers, over WebSocket (GET /v1/events; a socket
 * consumer receives the API-04 JSON) and as an event stream (SSE, GET
 * /v1/events/stream): what the state's event log delivers goes to this
 * process's readers, in log order, each event once. A reader that comes back
 * with the last id it saw first gets what it missed from the log's window,
 * or a `stream.reload` when the window no longer reaches back that far
 * (docs/api.md#events). Bounded: readers in all and per client, a heartbeat every
 * EVENTS_PING_INTERVAL_MS (a socket that has not answered the previous ping
 * is ended), and a reader that does not read its messages is closed once
 * EVENTS_MAX_BUFFERED_BYTES wait for it.
 */
async function events (app: FastifyInstance, { config }: { config: GatewayConfig }) {
  const readers = new Set<Reader>()
  const perCaller = new Map<string, number>()
  const log = app.state.events

  // Who the per-client cap counts: the client, or its address without authentication.
  const callerOf = (request: FastifyRequest): string =>
    request.client === null ? `address ${request.ip}` : `client ${request.client.name}`

  function tooMany (who: string): 'all' | 'client' | undefined {
    if (readers.size >= config.EVENTS_MAX_CONNECTIONS) return 'all'
    if ((perCaller.get(who) ?? 0) >= config.EVENTS_MAX_PER_CLIENT) return 'client'
    return undefined
  }

  function refuse (who: string) {
    const refused = tooMany(who)
    if (refused === 'all') throw gatewayError('OVERLOADED', { retryAfter: '10' })
    if (refused === 'client') throw gatewayError('RATE_LIMITED', { retryAfter: '10' })
  }

  function send (reader: Reader, type: string, id: string, json: string) {
    if (reader.sink.buffered() + Buffer.byteLength(json) > config.EVENTS_MAX_BUFFERED_BYTES) {
      // A reader that does not read would hold every message in memory.
      remove(reader)
      reader.sink.dropSlow()
      app.metrics.countDroppedSubscriber()
      return
    }
    reader.sink.message(type, id, json)
    reader.told = id
  }

  function reload (reader: Reader, reason: ReloadReason, id: string, lost?: number) {
    reader.last = id
    send(
      reader,
      'stream.reload',
      id,
      JSON.stringify({ type: 'stream.reload', id, reason, ...(lost === undefined ? {} : { lost }) })
    )
  }

  /** The entry to one reader, unless it has had it (or what follows it) already. */
  function offer (reader: Reader, entry: LogEntry) {
    if (compareEventIds(entry.id, reader.last) <= 0) return
    if (entry.type === 'events.lost') {
      if (reader.resumes) reload(reader, 'lost', entry.id, entry.lost)
      else reader.last = entry.id
      return
    }
    reader.last = entry.id
    if (mayView(reader.viewer, entry)) send(reader, entry.type, entry.id, publicEvent(entry))
  }

  function tellPosition (reader: Reader) {
    if (!reader.resumes || reader.told === reader.last || !readers.has(reader)) return
    reader.sink.position(reader.last)
    reader.told = reader.last
  }

  function deliver (entry: LogEntry) {
    for (const reader of readers) {
      if (reader.pending === undefined) offer(reader, entry)
      else reader.pending.push(entry)
    }
  }
  const unsubscribe = log.subscribe(deliver)

  const heartbeat = setInterval(() => {
    for (const reader of readers) {
      if (!reader.sink.tick()) continue
      if (reader.pending === undefined) tellPosition(reader)
    }
  }, config.EVENTS_PING_INTERVAL_MS)
  heartbeat.unref()

  function remove (reader: Reader) {
    if (!readers.delete(reader)) return
    const left = (perCaller.get(reader.who) ?? 1) - 1
    if (left === 0) perCaller.delete(reader.who)
    else perCaller.set(reader.who, left)
  }

  /** Counts a new reader in and starts it: from `after` (what it missed first), or from now. */
  function open (
    request: FastifyRequest,
    sink: Sink,
    who: string,
    after: string | undefined,
    resumes: boolean
  ): Reader {
    const live = after === undefined || after === 'now'
    const reader: Reader = {
      viewer: request.client,
      who,
      sink,
      pending: live ? undefined : [],
      last: live ? log.position() : after,
      told: live ? '' : after,
      resumes
    }
    readers.add(reader)
    perCaller.set(who, (perCaller.get(who) ?? 0) + 1)
    if (live) {
      // Its first position, so that a reader that sees no event before it drops still knows where
      // it was.
      tellPosition(reader)
      return reader
    }
    log.since(after).then(
      (replay) => {
        if (!readers.has(reader)) return
        if (replay.state === 'replayed') {
          for (const entry of replay.entries) offer(reader, entry)
        } else {
          request.log.info(
            { after, reason: replay.state },
            'events: a reader cannot resume from its id; told to reload'
          )
          reload(reader, replay.state, log.position())
        }
        const waiting = reader.pending ?? []
        reader.pending = undefined
        for (const entry of waiting) offer(reader, entry)
        tellPosition(reader)
      },
      (error: unknown) => request.log.error({ err: error }, 'events: resuming a reader failed')
    )
    return reader
  }

  // Heartbeats of event streams: SSE comment lines, which EventSource ignores.
  await app.register(sse, { heartbeatInterval: config.EVENTS_PING_INTERVAL_MS })
  await app.register(websocket, {
    // Browsers cannot set Authorization on a WebSocket: they offer the subprotocols
    // `bearer` and their key (auth/clients.ts reads it); the handshake agrees on `bearer`
    // only, so the key is never echoed. ws calls handleProtocols after our hooks ran.
    options: { maxPayload: 4096, handleProtocols: selectProtocol },
    preClose (done) {
      clearInterval(heartbeat)
      unsubscribe()
      for (const reader of readers) reader.sink.goAway()
      this.websocketServer.close(() => done())
    }
  })

  app.decorate('events', {
    admit (request) {
      if (isWebSocketUpgrade(request.headers)) refuse(callerOf(request))
    },
    add (socket, request, after) {
      const who = callerOf(request)
      // Upgrades admitted at the same moment may pass admit() together: the cap holds here too.
      if (tooMany(who) !== undefined) {
        socket.close(TRY_AGAIN_LATER, 'too many event connections')
        return
      }
      const reader = open(request, webSocketSink(socket), who, after, after !== undefined)
      socket.on('close', () => remove(reader))
    },
    stream (reply, request, after) {
      const who = callerOf(request)
      refuse(who)
      reply.sse.keepAlive()
      reply.sse.sendHeaders()
      const reader = open(request, eventStreamSink(reply), who, after, true)
      reply.sse.onClose(() => remove(reader))
    },
    publish: (event) => log.publish(event),
    get size () { return readers.size }
  } satisfies EventHub)
}

export default fp(events, { name: 'events', dependencies: ['state', 'metrics'] })
