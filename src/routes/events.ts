import type { FastifyInstance } from 'fastify'
import { gatewayError } from '../errors.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { Type } from '../schemas/typebox.ts'

/** GET /v1/events: booked notifications over WebSocket (contract.md 3). */
export default async function eventRoutes (app: FastifyInstance) {
  app.route({
    method: 'GET',
    url: '/v1/events',
    schema: {
      tags: ['events'],
      summary: 'Booked notifications (WebSocket)',
      operationId: 'getEvents',
      description: 'Upgrade to a WebSocket (`Upgrade: websocket`). After every successful `POST /v1/bookings/{bookingRequestId}/booked` ' +
        'each connected client receives one JSON text message:\n\n' +
        '```json\n{ "type": "booking.booked", "occurredAt": "2024-03-01T01:15:00.000Z", "requestId": "...",\n  "data": { "bookingRequestId": "BRQ-2024-0001", "booked": true, "note": "..." } }\n```\n\n' +
        'Messages from clients are ignored. On shutdown the gateway closes sockets with code 1001. A plain HTTP GET answers 426.\n\n' +
        '**Who sees which event:** a client sees the events of the booked POSTs it made itself, unless its entry in the clients file says `"events": "all"`; ' +
        'with authentication off (the sandbox without a clients file) every socket sees every event.\n\n' +
        '**Limits:** at most `EVENTS_MAX_PER_CLIENT` sockets per client (429 RATE_LIMITED before the upgrade) and `EVENTS_MAX_CONNECTIONS` in all (503 OVERLOADED); ' +
        'the gateway pings every `EVENTS_PING_INTERVAL_MS` and ends a socket that did not answer the previous ping; a socket that does not read its messages is closed with 1008 ' +
        'once `EVENTS_MAX_BUFFERED_BYTES` wait for it; an upgrade past the limits that slipped through is closed with 1013.',
      response: {
        101: Type.Null({ description: 'Switching Protocols: the WebSocket stream begins' }),
        ...errorResponses([426, 503])
      }
    },
    // After the scope check (onRequest): the limits count the authenticated client.
    preValidation: async (request) => { app.events.admit(request) },
    handler: async () => { throw gatewayError('UPGRADE_REQUIRED') },
    wsHandler: (socket, request) => { app.events.add(socket, request) }
  })
}
