import type { FastifyInstance } from 'fastify'
import { gatewayError } from '../errors.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { BOOKED_EVENT_EXAMPLE, BookedEventSchema } from '../schemas/events.ts'
import { Type } from '../schemas/typebox.ts'

/** GET /v1/events: booked notifications over WebSocket (contract.md 3). */
export default async function eventRoutes (app: FastifyInstance) {
  app.addSchema(BookedEventSchema)
  app.route({
    method: 'GET',
    url: '/v1/events',
    config: { scope: 'events:read' },
    schema: {
      tags: ['events'],
      summary: 'Booked notifications (WebSocket)',
      operationId: 'getEvents',
      // OpenAPI has no WebSocket messages: an extension names their schema.
      'x-websocket-message': { $ref: '#/components/schemas/BookedEvent' },
      description: 'Upgrade to a WebSocket (`Upgrade: websocket`). After every successful `POST /v1/bookings/{bookingRequestId}/booked` ' +
        'each connected client receives one JSON text message, a `BookedEvent` (see the schemas):\n\n' +
        '```json\n' + JSON.stringify(BOOKED_EVENT_EXAMPLE) + '\n```\n\n' +
        'Its `data` is the booking as the booked POST answers it: the same names and forms. ' +
        'Messages from clients are ignored. On shutdown the gateway closes sockets with code 1001. A plain HTTP GET answers 426.\n\n' +
        '**Who sees which event:** a client sees the events of the booked POSTs it made itself, unless its client entry allows it every event; ' +
        'without client authentication (the sandbox without clients) every socket sees every event.\n\n' +
        '**Limits:** a client may hold a few sockets at once (8 by default; past that 429 RATE_LIMITED before the upgrade), and the gateway a bounded number in all (503 OVERLOADED). ' +
        'The gateway pings every socket and ends one that did not answer the previous ping; a socket that does not read its messages is closed with 1008; ' +
        'an upgrade past the limits that slipped through is closed with 1013.',
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
