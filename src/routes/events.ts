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
        'Messages from clients are ignored. On shutdown the gateway closes sockets with code 1001. A plain HTTP GET answers 426.',
      response: {
        101: Type.Null({ description: 'Switching Protocols: the WebSocket stream begins' }),
        ...errorResponses([426])
      }
    },
    handler: async () => { throw gatewayError('UPGRADE_REQUIRED') },
    wsHandler: (socket) => { app.events.add(socket) }
  })
}
