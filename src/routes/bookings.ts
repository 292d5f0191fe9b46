import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { gatewayError } from '../errors.ts'
import { toUpstreamBooked, toUpstreamOffer } from '../mapping/requests.ts'
import { errorResponses, recordEnvelope, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { EXAMPLES } from '../schemas/examples.ts'
import { PARAM_RULES } from '../schemas/params.ts'
import { Type } from '../schemas/typebox.ts'
import { operation, upstreamDescription } from './describe.ts'

export const OfferBodySchema = Type.Object({
  serviceOrderId: Type.String({ minLength: 1, maxLength: 64, description: 'Sequence number of the offer (upstream `idServiceOrder`)', examples: [EXAMPLES.serviceOrderId] }),
  price: Type.Number({ minimum: 0, maximum: 1e12, description: 'Offered price, at most two decimals (upstream `hargaPenawaran`)', examples: [1250000.5] }),
  offeredAt: Type.String({ format: 'date-time', description: 'When the offer was made, ISO 8601 with offset; sent as the hub\'s local `YYYY-MM-DD HH:MM:SS` (upstream `waktuPenawaran`)', examples: ['2024-03-01T08:15:00+07:00'] })
}, { additionalProperties: false, title: 'Offer' })

export const BookedBodySchema = Type.Object({
  booked: Type.Boolean({ description: 'Whether the booking is made (upstream `isBooked` 1/0)', examples: [true] }),
  note: Type.Optional(Type.String({ maxLength: 500, description: 'Booking note (upstream `booking_note`); empty when left out', examples: ['Truck B 1234 XYZ, pickup 08:00'] }))
}, { additionalProperties: false, title: 'Booked notification' })

const bookingParams = Type.Object({ bookingRequestId: PARAM_RULES.bookingRequestId.schema }, { additionalProperties: false })
const WRITE_ERRORS = errorResponses([...UPSTREAM_STATUSES, 413, 415])

/** At most two decimals, judged on the decimal text so that 0.29 passes and 0.291 does not. */
function hasAtMostTwoDecimals (value: number): boolean {
  return Math.abs(Math.round(value * 100) - value * 100) < 1e-6
}

/** Truck platform booking calls (contract.md 3); never retried automatically. */
export default async function bookingRoutes (fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { PLATFORM_ID, UPSTREAM_TIMEZONE } = app.config

  app.post('/v1/bookings/:bookingRequestId/offers', {
    schema: {
      tags: ['bookings'],
      summary: 'Post a price offer',
      operationId: 'postBookingOffer',
      description: 'Posts a truck platform\'s price offer against a booking request. The platform id comes from configuration and the hub\'s `timestamp` is filled by the gateway.\n\n' + upstreamDescription(operation('DetilBooking')),
      params: bookingParams,
      body: OfferBodySchema,
      response: { 200: recordEnvelope('HubAcknowledgement', 'The hub\'s acknowledgement'), ...WRITE_ERRORS }
    }
  }, async (request, reply) => {
    const { bookingRequestId } = request.params
    const offer = request.body
    if (!hasAtMostTwoDecimals(offer.price)) {
      throw gatewayError('VALIDATION_FAILED', { details: [{ field: 'body.price', rule: 'must have at most two decimals' }] }, 'body.price must have at most two decimals')
    }
    const body = toUpstreamOffer(bookingRequestId, offer, PLATFORM_ID, UPSTREAM_TIMEZONE)
    const { data } = await app.hub.call({ operation: 'DetilBooking', body, requestId: request.id, log: request.log, request })
    reply.header('cache-control', 'no-store')
    return { data, meta: {} }
  })

  app.post('/v1/bookings/:bookingRequestId/booked', {
    schema: {
      tags: ['bookings'],
      summary: 'Send a booked notification',
      operationId: 'postBookingBooked',
      description: 'Tells the hub a booking request is booked. On success the notification goes to `GET /v1/events`: to this client\'s own sockets, and to those of clients allowed to see every event.\n\n' + upstreamDescription(operation('DetilBooking/isBooked')),
      params: bookingParams,
      body: BookedBodySchema,
      response: { 200: recordEnvelope('HubAcknowledgement', 'The hub\'s acknowledgement'), ...WRITE_ERRORS }
    }
  }, async (request, reply) => {
    const { bookingRequestId } = request.params
    const { booked, note = '' } = request.body
    const { data } = await app.hub.call({
      operation: 'DetilBooking/isBooked',
      params: { bookingRequestId },
      body: toUpstreamBooked(booked, note),
      requestId: request.id,
      log: request.log,
      request
    })
    app.events.publish({
      type: 'booking.booked',
      occurredAt: new Date().toISOString(),
      requestId: request.id,
      client: request.client?.name ?? null,
      data: { bookingRequestId, booked, note }
    })
    reply.header('cache-control', 'no-store')
    return { data, meta: {} }
  })
}
