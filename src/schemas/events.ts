import { EVENT_ID_PATTERN } from '../state/event-ids.ts'
import { Type, type Static } from '../typebox.ts'

/** One message as an example: the document shows it, and typed clients see it. */
export const BOOKED_EVENT_EXAMPLE = {
  id: '1709255700000-0',
  type: 'booking.booked',
  occurredAt: '2024-03-01T01:15:00.000Z',
  requestId: '5b0b7c1e-0d5f-4b8e-9a51-2f4f1d3c9e01',
  data: {
    bookingRequestId: 'BKG-20240301-0001',
    booked: true,
    note: 'Truck B 1234 XYZ, pickup 08:00'
  }
}

/** An event id (state/event-ids.ts). */
export function EventIdSchema (description: string) {
  return Type.String({
    pattern: EVENT_ID_PATTERN,
    maxLength: 31,
    description,
    examples: ['1709255700000-0']
  })
}

/**
 * The message a client of GET /v1/events receives, in the document's
 * components (`BookedEvent`) so that typed clients are generated from it
 * rather than written by hand. Its `data` is the booking as the booked POST
 * answers it (BookedAnswer), the same names and forms, without the hub's
 * message.
 */
export const BookedEventSchema = Type.Object(
  {
    id: EventIdSchema(
      "The event's position in the gateway's event log, `<ms>-<seq>`: the same on every socket " +
      'and stream of every replica that delivers it, and ordered (a later event has a greater ' +
      'id: compare the milliseconds, then the sequence). A reader that comes back sends the last ' +
      'one it saw (`lastEventId`, `Last-Event-ID`) and gets what it missed; a client can drop a ' +
      'message whose id is not greater than the last it saw'
    ),
    type: Type.Literal('booking.booked', {
      description: 'What happened: a booking request was booked (or un-booked, `data.booked` false)'
    }),
    occurredAt: Type.String({
      format: 'date-time',
      description: 'When the gateway sent the notification, ISO 8601 in UTC'
    }),
    requestId: Type.String({
      description: 'The id of the booked POST that caused it (its `x-request-id`)'
    }),
    data: Type.Object(
      {
        bookingRequestId: Type.String({ description: 'Booking request code' }),
        booked: Type.Boolean({ description: 'Whether the booking is made, as sent' }),
        note: Type.String({ description: 'Booking note, as sent (empty when left out)' })
      },
      {
        additionalProperties: false,
        description: 'The booking, as `POST /v1/bookings/{bookingRequestId}/booked` answers it'
      }
    )
  },
  {
    $id: 'BookedEvent',
    title: 'Booked notification',
    description:
      'One JSON text message of `GET /v1/events` (the `data` of a `booking.booked` event of `GET ' +
      '/v1/events/stream`), sent after every successful booked POST',
    additionalProperties: false,
    examples: [BOOKED_EVENT_EXAMPLE]
  }
)

export type BookedEvent = Static<typeof BookedEventSchema>

export const STREAM_RELOAD_EXAMPLE = {
  type: 'stream.reload',
  id: '1709255712345-0',
  reason: 'expired'
}

/** What a resuming reader is told when the gateway cannot give it what it missed. */
export const StreamReloadSchema = Type.Object(
  {
    type: Type.Literal('stream.reload', {
      description: 'The reader may have missed events: reload what it shows from the API'
    }),
    id: EventIdSchema('Where the stream goes on from: the position to resume from next time'),
    reason: Type.Enum(['expired', 'lost', 'unavailable'], {
      description:
        '`expired`: the id resumed from is older than the window the gateway keeps, or from a ' +
        'log since lost (a restart); ' +
        '`lost`: events were lost here (published while the shared store was unreachable, past ' +
        'what a replica holds); `unavailable`: the log could not be read right now'
    }),
    lost: Type.Optional(
      Type.Integer({ minimum: 0, description: 'With `lost`: how many (0: unknown)' })
    )
  },
  {
    $id: 'StreamReload',
    title: 'Reload signal',
    description:
      'Sent to a reader that resumes (a WebSocket with `lastEventId`, every event stream) ' +
      'instead of a silent gap',
    additionalProperties: false,
    examples: [STREAM_RELOAD_EXAMPLE]
  }
)

/**
 * The position of a reader that saw no event for a while (WebSocket with `lastEventId` only: event
 * streams get an `id:` line).
 */
export const StreamPositionSchema = Type.Object(
  {
    type: Type.Literal('stream.position', { description: 'Where the reader is in the log' }),
    id: EventIdSchema(
      'The position: every event up to it that the reader may see has been sent; resume from it'
    )
  },
  {
    $id: 'StreamPosition',
    title: 'Position',
    description:
      'Sent on connection and with the heartbeats when the position moved without an event for ' +
      "this reader (others' events), so that it resumes from there",
    additionalProperties: false,
    examples: [{ type: 'stream.position', id: '1709255712345-0' }]
  }
)

export type StreamReload = Static<typeof StreamReloadSchema>
export type StreamPosition = Static<typeof StreamPositionSchema>

/** A ticket's form: 32 random bytes, base64url. */
export const TICKET_PATTERN = '^[A-Za-z0-9_-]{43}$'

export const TicketSchema = Type.Object(
  {
    ticket: Type.String({
      pattern: TICKET_PATTERN,
      description:
        'Opens one event stream: `GET /v1/events/stream?ticket=<ticket>`. Single-use; a secret ' +
        'until used'
    }),
    expiresAt: Type.String({
      format: 'date-time',
      description: 'When it can no longer be used, ISO 8601 in UTC'
    })
  },
  { additionalProperties: false, $id: 'EventStreamTicket', title: 'Event-stream ticket' }
)

/**
 * The events' shared schemas, for `components.schemas` (registered with the others by
 * plugins/swagger.ts, so that the event routes add no schema set of their own).
 */
export const EVENT_SCHEMAS = [
  BookedEventSchema,
  StreamReloadSchema,
  StreamPositionSchema,
  TicketSchema
]
