import { Type, type Static } from './typebox.ts'

/**
 * The message every client of GET /v1/events receives after a successful
 * booked POST. Registered as the `BookedEvent` component of the OpenAPI
 * document (plugins/swagger.ts) so that typed clients are generated from it
 * rather than written by hand.
 */
export const BookedEventSchema = Type.Object({
  type: Type.Literal('booking.booked', { description: 'What happened: a booking request was marked booked' }),
  occurredAt: Type.String({ format: 'date-time', description: 'When the gateway sent the notification, ISO 8601 in UTC', examples: ['2024-03-01T01:15:00.000Z'] }),
  requestId: Type.String({ description: 'Id of the booked POST that caused it (its `x-request-id`)' }),
  data: Type.Object({
    bookingRequestId: Type.String({ description: 'Booking request code (from the hub\'s API-01)', examples: ['BKG-20240301-0001'] }),
    booked: Type.Boolean({ description: 'Whether the booking is made, as posted' }),
    note: Type.String({ description: 'Booking note, as posted; empty when it was left out', examples: ['Truck B 1234 XYZ, pickup 08:00'] })
  }, { additionalProperties: false, description: 'The booked notification, as posted' })
}, { $id: 'BookedEvent', title: 'Booked event', description: 'A WebSocket text message of GET /v1/events', additionalProperties: false })

export type BookedEvent = Static<typeof BookedEventSchema>
