import { Type, type Static } from './typebox.ts'

/** One message as an example: the document shows it, and typed clients see it. */
export const BOOKED_EVENT_EXAMPLE = { id: '0f8a3c52-7d1e-4b6a-9c2f-5e4d3b2a1908', type: 'booking.booked', occurredAt: '2024-03-01T01:15:00.000Z', requestId: '5b0b7c1e-0d5f-4b8e-9a51-2f4f1d3c9e01', data: { bookingRequestId: 'BKG-20240301-0001', booked: true, note: 'Truck B 1234 XYZ, pickup 08:00' } }

/**
 * The message a client of GET /v1/events receives, in the document's
 * components (`BookedEvent`) so that typed clients are generated from it
 * rather than written by hand. Its `data` is the booking as the booked POST
 * answers it (BookedAnswer), the same names and forms, without the hub's
 * message.
 */
export const BookedEventSchema = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The event\'s own id (a UUID), the same on every socket of every gateway replica that delivers it: a client that listens on more than one socket can drop a message whose id it has already seen' }),
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

export type BookedEvent = Static<typeof BookedEventSchema>
