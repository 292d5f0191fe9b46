import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { gatewayError } from '../errors.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { BOOKED_EVENT_EXAMPLE, STREAM_RELOAD_EXAMPLE, TICKET_PATTERN } from '../schemas/events.ts'
import { EVENT_POSITION } from '../schemas/formats.ts'
import { Type, type TypeBoxTypeProvider } from '../typebox.ts'
import { isStateUnavailable } from '../state/types.ts'

/** What a caller retries after when the shared state does not answer. */
const UNAVAILABLE_RETRY_AFTER = '2'

/** Where a reader resumes from: an event id, or `now` (schemas/formats.ts EVENT_POSITION). */
const resumeFrom = (description: string) =>
  Type.String({
    format: 'event-position',
    pattern: EVENT_POSITION.pattern,
    maxLength: 31,
    description,
    examples: ['1709255700000-0']
  })

const StreamQuerySchema = Type.Object(
  {
    lastEventId: Type.Optional(
      resumeFrom(
        'Resume after this event id (the last one seen), for a new EventSource that cannot send ' +
        '`Last-Event-ID` (the header wins when both are sent); `now` or left out: from now on'
      )
    ),
    // format password: never logged (logging/request-serializer.ts), and shown masked by OpenAPI
    // tools.
    ticket: Type.Optional(
      Type.String({
        pattern: TICKET_PATTERN,
        format: 'password',
        description:
          'A ticket from `POST /v1/events/tickets`, for EventSource (which cannot send headers): ' +
          'single-use, short-lived, never logged. Other clients send `Authorization: Bearer ' +
          '<key>` instead'
      })
    )
  },
  { additionalProperties: false }
)

const StreamHeadersSchema = Type.Object({
  'last-event-id': Type.Optional(
    resumeFrom('Resume after this event id: what EventSource sends by itself when it reconnects')
  )
})

/**
 * Booked notifications: GET /v1/events over WebSocket (docs/api.md#routes), GET
 * /v1/events/stream as an event stream (SSE), and the tickets that stand for
 * a key where EventSource cannot send one (docs/api.md#events).
 */
export default async function eventRoutes (fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const ticketMs = app.config.EVENTS_TICKET_SECONDS * 1000

  app.route({
    method: 'GET',
    url: '/v1/events',
    config: { scope: 'events:read' },
    schema: {
      tags: ['events'],
      summary: 'Booked notifications (WebSocket)',
      operationId: 'getEvents',
      // OpenAPI has no WebSocket messages: an extension names their schemas.
      'x-websocket-message': {
        oneOf: [
          { $ref: '#/components/schemas/BookedEvent' },
          { $ref: '#/components/schemas/StreamReload' },
          { $ref: '#/components/schemas/StreamPosition' }
        ]
      },
      description:
        'Upgrade to a WebSocket (`Upgrade: websocket`). After every successful `POST ' +
        '/v1/bookings/{bookingRequestId}/booked` ' +
        'each connected client receives one JSON text message, a `BookedEvent` (see the ' +
        'schemas):\n\n' +
        '```json\n' +
        JSON.stringify(BOOKED_EVENT_EXAMPLE) +
        '\n```\n\n' +
        'Its `data` is the booking as the booked POST answers it: the same names and forms. Its ' +
        "`id` is its position in the gateway's event log (`<ms>-<seq>`, ordered, the same on " +
        'every replica). ' +
        'Messages from clients are ignored. On shutdown the gateway closes sockets with code ' +
        '1001. A plain HTTP GET answers 426.\n\n' +
        '**Resuming:** connect with `?lastEventId=<the last id seen>` to get first what was sent ' +
        'while the socket was closed (the gateway keeps the last events for a window of ' +
        'minutes), then what follows; `?lastEventId=now` to start from now. ' +
        'With `lastEventId`, two more messages may come: `StreamPosition` ' +
        '(`{"type":"stream.position","id"}`, on connection and with the heartbeats, when the log ' +
        'moved on without an event for this client: resume from it) and `StreamReload` ' +
        '(`' +
        JSON.stringify(STREAM_RELOAD_EXAMPLE) +
        '`: the id is older than the window, or events were lost; reload what the page shows, ' +
        'and resume from its `id`). Without `lastEventId`, booked events only, as before.\n\n' +
        '**Who sees which event:** a client sees the events of the booked POSTs it made itself, ' +
        'unless its client entry allows it every event; ' +
        'without client authentication (the sandbox without clients) every socket sees every ' +
        'event.\n\n' +
        '**Limits:** a client may hold a few sockets and streams at once (8 by default; past ' +
        'that 429 RATE_LIMITED before the upgrade), and the gateway a bounded number in all (503 ' +
        'OVERLOADED). ' +
        'The gateway pings every socket and ends one that did not answer the previous ping; a ' +
        'socket that does not read its messages is closed with 1008 (it resumes from its last ' +
        'id); ' +
        'an upgrade past the limits that slipped through is closed with 1013.',
      querystring: Type.Object(
        {
          lastEventId: Type.Optional(
            resumeFrom(
              'Resume after this event id (the last one seen); `now`: from now on. Either way ' +
                'the resume messages (`StreamPosition`, `StreamReload`) are sent'
            )
          )
        },
        { additionalProperties: false }
      ),
      response: {
        101: Type.Null({ description: 'Switching Protocols: the WebSocket stream begins' }),
        ...errorResponses([400], { codes: ['VALIDATION_FAILED'] }),
        // No hub behind it: its 503s are the gateway's own.
        ...errorResponses([426]),
        ...errorResponses([503], { codes: ['OVERLOADED', 'SHUTTING_DOWN'] })
      }
    },
    // After the scope check (onRequest): the limits count the authenticated client.
    preValidation: async (request) => {
      app.events.admit(request)
    },
    handler: async () => {
      throw gatewayError('UPGRADE_REQUIRED')
    },
    wsHandler: (socket, request) => {
      app.events.add(socket, request, request.query.lastEventId)
    }
  })

  /**
   * A ticket stands for the key it was issued to, once (before the scope check, which auth adds
   * after this hook).
   */
  async function redeemTicket (request: FastifyRequest) {
    // Before validation: the query is as parsed, not yet of the schema's type.
    const query = request.query
    const ticket =
      typeof query === 'object' && query !== null && 'ticket' in query ? query.ticket : undefined
    if (
      typeof ticket !== 'string' ||
      app.clients === null ||
      request.headers.authorization !== undefined
    ) { return }
    let held: { client: string | null } | undefined
    try {
      held = await app.state.tickets.redeem(ticket)
    } catch (error) {
      if (isStateUnavailable(error)) {
        throw gatewayError('EVENTS_UNAVAILABLE', {
          retryAfter: UNAVAILABLE_RETRY_AFTER,
          cause: error
        })
      }
      throw error
    }
    request.client = held?.client == null ? null : app.clients.find(held.client)
  }

  app.route({
    method: 'GET',
    url: '/v1/events/stream',
    config: { scope: 'events:read' },
    sse: 'manual',
    schema: {
      tags: ['events'],
      summary: 'Booked notifications (event stream, SSE)',
      operationId: 'getEventStream',
      description:
        'The events of `GET /v1/events` as `text/event-stream`, for `EventSource`. Each is an ' +
        'SSE event of type `booking.booked` whose `id` is the event id and whose `data` is the ' +
        '`BookedEvent` JSON:\n\n' +
        '```\nid: ' +
        BOOKED_EVENT_EXAMPLE.id +
        '\nevent: booking.booked\ndata: ' +
        JSON.stringify(BOOKED_EVENT_EXAMPLE) +
        '\n```\n\n' +
        "Listen with `source.addEventListener('booking.booked', ...)` (not `onmessage`: the " +
        'events are typed). ' +
        '**Resuming:** EventSource sends `Last-Event-ID` by itself when it reconnects, and gets ' +
        'first what it missed (within the window the gateway keeps); a new EventSource passes ' +
        '`?lastEventId=`. ' +
        'When the id is older than the window, or events were lost, a `stream.reload` event ' +
        '(`StreamReload`) says so: reload what the page shows. Lines `id: <id>` without data ' +
        "move the position on when others' events pass (EventSource dispatches nothing for " +
        'them). ' +
        '**Heartbeats:** a comment line (`: heartbeat`) every 30 seconds (by default), so that ' +
        'proxies keep an idle stream open.\n\n' +
        '**Authentication:** `Authorization: Bearer <key>`; EventSource, which cannot send ' +
        'headers, gets a ticket from `POST /v1/events/tickets` and opens `?ticket=<ticket>`. A ' +
        'ticket is single-use: after an error, get a new one and open a new EventSource with ' +
        '`lastEventId`. ' +
        'The same scope, per-client visibility and limits as the WebSocket route (sockets and ' +
        'streams count together); a stream that does not read its events is closed, and resumes ' +
        'when it reconnects.',
      querystring: StreamQuerySchema,
      headers: StreamHeadersSchema,
      response: {
        200: {
          description:
            'The event stream: `booking.booked` and `stream.reload` events, `id:` lines and ' +
            'heartbeat comments, until the client or the gateway closes it',
          content: {
            'text/event-stream': {
              schema: Type.String({
                examples: [
                  `id: ${BOOKED_EVENT_EXAMPLE.id}\nevent: booking.booked\ndata: ` +
                    `${JSON.stringify(BOOKED_EVENT_EXAMPLE)}\n\n`
                ]
              })
            }
          }
        },
        ...errorResponses([400], { codes: ['VALIDATION_FAILED'] }),
        ...errorResponses([500]),
        ...errorResponses([503], { codes: ['OVERLOADED', 'EVENTS_UNAVAILABLE', 'SHUTTING_DOWN'] })
      }
    },
    onRequest: redeemTicket,
    handler: async (request, reply) => {
      const { lastEventId } = request.query
      app.events.stream(reply, request, request.headers['last-event-id'] ?? lastEventId)
    }
  })

  app.route({
    method: 'POST',
    url: '/v1/events/tickets',
    config: { scope: 'events:read' },
    schema: {
      tags: ['events'],
      summary: 'A ticket for an event stream (EventSource)',
      operationId: 'postEventStreamTicket',
      description:
        'A single-use ticket that opens `GET /v1/events/stream?ticket=<ticket>` as this client, ' +
        'for `EventSource`, which cannot send the key in a header. ' +
        'It expires after a minute (by default) and works on every replica. No body.',
      response: {
        200: Type.Object(
          {
            data: Type.Ref('EventStreamTicket'),
            meta: Type.Object({}, { additionalProperties: false, description: 'Response metadata' })
          },
          {
            additionalProperties: false,
            description: 'The ticket',
            examples: [
              {
                data: {
                  ticket: 'Yq3xk1c2mJ0pQwR8sT4uV6wX9zA0bC2dE4fG6hI8jK0',
                  expiresAt: '2024-03-01T01:16:00.000Z'
                },
                meta: {}
              }
            ]
          }
        ),
        ...errorResponses([500]),
        ...errorResponses([503], { codes: ['OVERLOADED', 'EVENTS_UNAVAILABLE', 'SHUTTING_DOWN'] })
      }
    },
    handler: async (request) => {
      const ticket = randomBytes(32).toString('base64url')
      try {
        await app.state.tickets.issue(ticket, request.client?.name ?? null, ticketMs)
      } catch (error) {
        if (isStateUnavailable(error)) {
          throw gatewayError('EVENTS_UNAVAILABLE', {
            retryAfter: UNAVAILABLE_RETRY_AFTER,
            cause: error
          })
        }
        throw error
      }
      return {
        data: { ticket, expiresAt: new Date(Date.now() + ticketMs).toISOString() },
        meta: {}
      }
    }
  })
}
