import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { toIsoDateTime } from '../domain/dates.ts'
import { toUpstreamBooked, toUpstreamOffer, writeAnswer } from '../mapping/request-bodies.ts'
import { errorResponses, recordEnvelope, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { EXAMPLES } from '../schemas/examples.ts'
import { PARAM_SCHEMAS } from '../schemas/params.ts'
import { Type } from '../schemas/typebox.ts'

export const OfferBodySchema = Type.Object({
  serviceOrderId: Type.String({ minLength: 1, maxLength: 64, description: 'Sequence number of the offer (upstream `idServiceOrder`)', examples: [EXAMPLES.serviceOrderId] }),
  price: Type.Number({ minimum: 0, maximum: 1e12, multipleOf: 0.01, description: 'Offered price, at most two decimals (upstream `hargaPenawaran`)', examples: [1250000.5] }),
  offeredAt: Type.String({ format: 'date-time', description: 'When the offer was made, ISO 8601 with offset; sent as the hub\'s local `YYYY-MM-DD HH:MM:SS` (upstream `waktuPenawaran`)', examples: ['2024-03-01T08:15:00+07:00'] })
}, { additionalProperties: false, title: 'Offer' })

export const BookedBodySchema = Type.Object({
  booked: Type.Boolean({ description: 'Whether the booking is made (upstream `isBooked` 1/0)', examples: [true] }),
  note: Type.Optional(Type.String({ maxLength: 500, description: 'Booking note (upstream `booking_note`); empty when left out', examples: ['Truck B 1234 XYZ, pickup 08:00'] }))
}, { additionalProperties: false, title: 'Booked notification' })

const bookingParams = Type.Object({ bookingRequestId: PARAM_SCHEMAS.bookingRequestId }, { additionalProperties: false })
const WRITE_ERRORS = errorResponses([...UPSTREAM_STATUSES, 413, 415])

/** Truck platform booking calls (contract.md 3); never retried automatically. */
export default async function bookingRoutes (fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { PLATFORM_ID, UPSTREAM_TIMEZONE } = app.config

  app.post('/v1/bookings/:bookingRequestId/offers', {
    config: { hubOperations: ['DetilBooking'] },
    schema: {
      tags: ['bookings'],
      summary: 'Post a price offer',
      operationId: 'postBookingOffer',
      description: 'Posts a truck platform\'s price offer against a booking request. The platform id comes from configuration and the hub\'s `timestamp` is filled by the gateway.',
      params: bookingParams,
      body: OfferBodySchema,
      response: { 200: recordEnvelope('OfferAnswer', 'The offer, as the hub accepted it'), ...WRITE_ERRORS }
    }
  }, async (request, reply) => {
    const { bookingRequestId } = request.params
    const offer = request.body
    const body = toUpstreamOffer(bookingRequestId, offer, PLATFORM_ID, UPSTREAM_TIMEZONE)
    const { data } = await app.hub.call(request, { operation: 'DetilBooking', body })
    reply.header('cache-control', 'no-store')
    const facts = { bookingRequestId, serviceOrderId: offer.serviceOrderId, price: offer.price, offeredAt: toIsoDateTime(body.waktuPenawaran, UPSTREAM_TIMEZONE) }
    return { data: writeAnswer(facts, data), meta: {} }
  })

  app.post('/v1/bookings/:bookingRequestId/booked', {
    config: { hubOperations: ['DetilBooking/isBooked'] },
    schema: {
      tags: ['bookings'],
      summary: 'Send a booked notification',
      operationId: 'postBookingBooked',
      description: 'Tells the hub a booking request is booked. On success the notification goes to `GET /v1/events`, a `BookedEvent` whose `data` describes the booking as this answer does: `bookingRequestId`, `booked` and `note`, the same names and values. It reaches this client\'s own sockets, and those of clients allowed to see every event.',
      params: bookingParams,
      body: BookedBodySchema,
      response: { 200: recordEnvelope('BookedAnswer', 'The booked notification, as the hub accepted it: the `data` of the event it causes, and the hub\'s message'), ...WRITE_ERRORS }
    }
  }, async (request, reply) => {
    const { bookingRequestId } = request.params
    const { booked, note = '' } = request.body
    const { data } = await app.hub.call(request, { operation: 'DetilBooking/isBooked', params: { bookingRequestId }, body: toUpstreamBooked(booked, note) })
    // The answer and the event describe the booking alike: the same names and forms.
    const booking = { bookingRequestId, booked, note }
    app.events.publish({
      type: 'booking.booked',
      occurredAt: new Date().toISOString(),
      requestId: request.id,
      client: request.client?.name ?? null,
      data: booking
    })
    reply.header('cache-control', 'no-store')
    return { data: writeAnswer(booking, data), meta: {} }
  })
}
