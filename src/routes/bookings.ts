import type { FastifyInstance } from 'fastify'
import { toIsoDateTime } from '../domain/dates.ts'
import { toUpstreamBooked, toUpstreamOffer, writeAnswer } from '../mapping/request-bodies.ts'
import { gatewayError } from '../errors.ts'
import { EXAMPLES } from '../schemas/examples.ts'
import { BL_DATE_YEARS, inDateYears } from '../schemas/formats.ts'
import { PARAM_SCHEMAS } from '../schemas/params.ts'
import { Type } from '../typebox.ts'
import { registerWrite } from './write-route.ts'

export const OfferBodySchema = Type.Object(
  {
    serviceOrderId: Type.String({
      format: 'identifier',
      minLength: 1,
      maxLength: 64,
      description:
        'Sequence number of the offer (upstream `idServiceOrder`): 1 to 64 characters, neither ' +
        'blank nor with spaces before or after it; no control characters (tab and line breaks ' +
        'included), line or paragraph separators, format characters (bidi controls, zero-width ' +
        'characters, BOM) or unpaired surrogates',
      examples: [EXAMPLES.serviceOrderId]
    }),
    price: Type.Number({
      minimum: 0,
      maximum: 1e12,
      multipleOf: 0.01,
      description: 'Offered price, at most two decimals (upstream `hargaPenawaran`)',
      examples: [1250000.5]
    }),
    offeredAt: Type.String({
      format: 'date-time',
      description: 'When the offer was made, ISO 8601 with offset; sent as the hub\'s local ' +
        '`YYYY-MM-DD HH:MM:SS` (upstream `waktuPenawaran`). A real date and time in the ' +
        `years ${BL_DATE_YEARS.first} to ${BL_DATE_YEARS.last}, in the hub's local time too; ` +
        'seconds 00 to 59 (a leap second, `23:59:60`, is refused); fractions of a second are ' +
        'dropped',
      examples: ['2024-03-01T08:15:00+07:00']
    })
  },
  { additionalProperties: false, title: 'Offer' }
)

export const BookedBodySchema = Type.Object(
  {
    booked: Type.Boolean({
      description: 'Whether the booking is made (upstream `isBooked` 1/0)',
      examples: [true]
    }),
    note: Type.Optional(
      Type.String({
        format: 'text',
        maxLength: 500,
        description:
          'Booking note (upstream `booking_note`); empty when left out. One line of at most 500 ' +
          'characters: no line breaks, tabs or other control characters, line or paragraph ' +
          'separators, format characters (bidi controls, zero-width characters, BOM) or unpaired ' +
          'surrogates',
        examples: ['Truck B 1234 XYZ, pickup 08:00']
      })
    )
  },
  { additionalProperties: false, title: 'Booked notification' }
)

const bookingParams = Type.Object(
  { bookingRequestId: PARAM_SCHEMAS.bookingRequestId },
  { additionalProperties: false }
)

/** Truck platform booking calls (docs/api.md#routes); never retried automatically. */
export default async function bookingRoutes (app: FastifyInstance) {
  const { PLATFORM_ID } = app.config
  // The UTC offset of the hub's local times, as its profile says.
  const { timeZone } = app.hub.profile

  registerWrite(app, {
    operation: 'DetilBooking',
    params: bookingParams,
    body: OfferBodySchema,
    async handler (request, hub) {
      const { bookingRequestId } = request.params
      const offer = request.body
      const body = toUpstreamOffer(bookingRequestId, offer, PLATFORM_ID, timeZone)
      // The years of the format hold for the hub's local time too: 2100-12-31T23:00:00-05:00 is
      // 2101 at +07:00.
      if (!inDateYears(Number(/^(\d{4})-/.exec(body.waktuPenawaran)?.[1]))) {
        const rule = `must be in the years ${BL_DATE_YEARS.first} to ${BL_DATE_YEARS.last} ` +
          `in the hub's local time (${timeZone}) too`
        throw gatewayError(
          'VALIDATION_FAILED',
          { details: [{ field: 'body.offeredAt', rule }] },
          `body.offeredAt ${rule}`
        )
      }
      const data = await hub({ params: { bookingRequestId }, body })
      const offeredAt = toIsoDateTime(body.waktuPenawaran, timeZone)
      const { serviceOrderId, price } = offer
      return writeAnswer({ bookingRequestId, serviceOrderId, price, offeredAt }, data)
    }
  })

  registerWrite(app, {
    operation: 'DetilBooking/isBooked',
    params: bookingParams,
    body: BookedBodySchema,
    async handler (request, hub) {
      const { bookingRequestId } = request.params
      const { booked, note = '' } = request.body
      const data = await hub({ params: { bookingRequestId }, body: toUpstreamBooked(booked, note) })
      // The answer and the event describe the booking alike: the same names and forms.
      const booking = { bookingRequestId, booked, note }
      await app.events.publish({
        type: 'booking.booked',
        occurredAt: new Date().toISOString(),
        requestId: request.id,
        client: request.client?.name ?? null,
        data: booking
      })
      return writeAnswer(booking, data)
    }
  })
}
