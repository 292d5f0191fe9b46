import type { FastifyInstance } from 'fastify'
import { gatewayError } from '../errors.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { Type } from '../schemas/typebox.ts'

/** GET /v1/events: booked notifications over WebSocket (contract.md 3). */
export default async function eventRoutes (app: FastifyInstance) {
  // `x-websocket-message` names the message schema (OpenAPI has no word for
  // WebSocket messages), so that typed clients generate the event type from it.
  const schema = {
    tags: ['events'],
    summary: 'Booked notifications (WebSocket)',
    operationId: 'getEvents',
    description: 'Upgrade to a WebSocket (`Upgrade: websocket`). After every successful `POST /v1/bookings/{bookingRequestId}/booked` ' +
      'each connected client receives one JSON text message, a `BookedEvent` (named by this operation\'s `x-websocket-message`):\n\n' +
      '```json\n{ "type": "booking.booked", "occurredAt": "2024-03-01T01:15:00.000Z", "requestId": "...",\n  "data": { "bookingRequestId": "BRQ-2024-0001", "booked": true, "note": "..." } }\n```\n\n' +
      'Messages from clients are ignored. On shutdown the gateway closes sockets with code 1001. A plain HTTP GET answers 426.',
    'x-websocket-message': { $ref: '#/components/schemas/BookedEvent' },
    response: {
      101: Type.Null({ description: 'Switching Protocols: the WebSocket stream begins' }),
      ...errorResponses([426])
    }
  }
  app.route({
    method: 'GET',
    url: '/v1/events',
    schema,
    handler: async () => { throw gatewayError('UPGRADE_REQUIRED') },
    wsHandler: (socket) => { app.events.add(socket) }
  })
}
