import type { FastifyInstance } from 'fastify'
import { gatewayError } from '../errors.ts'
import { errorResponses } from '../schemas/envelope.ts'
import { Type } from '../schemas/typebox.ts'

/**
 * The message a client of GET /v1/events receives, in the document's
 * components so that a client can type it. Its `data` is the booking as the
 * booked POST answers it (BookedAnswer), the same names and forms, without
 * the hub's message.
 */
const BOOKED_EVENT_EXAMPLE = { type: 'booking.booked', occurredAt: '2024-03-01T01:15:00.000Z', requestId: '5b0b7c1e-0d5f-4b8e-9a51-2f4f1d3c9e01', data: { bookingRequestId: 'BKG-20240301-0001', booked: true, note: 'Truck B 1234 XYZ, pickup 08:00' } }

export const BookedEventSchema = Type.Object({
  type: Type.Literal('booking.booked', { description: 'What happened: a booking request was booked (or un-booked, `data.booked` false)' }),
  occurredAt: Type.String({ format: 'date-time', description: 'When the gateway sent the notification, ISO 8601 in UTC' }),
  requestId: Type.String({ description: 'The id of the booked POST that caused it (its `x-request-id`)' }),
  data: Type.Object({
    bookingRequestId: Type.String({ description: 'Booking request code' }),
    booked: Type.Boolean({ description: 'Whether the booking is made, as sent' }),
    note: Type.String({ description: 'Booking note, as sent (empty when left out)' })
  }, { additionalProperties: false, description: 'The booking, as `POST /v1/bookings/{bookingRequestId}/booked` answers it' })
}, {
  $id: 'BookedEvent',
  title: 'Booked notification (WebSocket message)',
  description: 'One JSON text message of `GET /v1/events`, sent after every successful booked POST',
  additionalProperties: false,
  examples: [BOOKED_EVENT_EXAMPLE]
})

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
