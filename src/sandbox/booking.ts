import { json, message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { OperationContext } from './context.ts'

// Handlers of the booking calls (docs/hub.md#operations). Neither success body is shown
// (docs/hub.md#open-points); these are our choices.

const DATETIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/
const UNKNOWN_BOOKING = 'Booking request tidak ditemukan'

type JsonObject = Record<string, unknown>

type BodyCheck = { ok: true, value: JsonObject } | { ok: false, answer: Answer }

function objectBody ({ body }: OperationContext): BodyCheck {
  if (body.kind === 'none') return { ok: false, answer: message(400, 'Body wajib diisi') }
  if (body.kind === 'invalid') return { ok: false, answer: message(400, 'Body harus berupa JSON') }
  const value = body.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, answer: message(400, 'Body harus berupa objek JSON') }
  }
  return { ok: true, value: value as JsonObject }
}

function nonEmptyString (value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

/**
 * 4.8: validates the offer (2.10, all six fields) against a known booking
 * request. A variant that names the booking request in its address takes it
 * from there; the body's, when it has one, must be the same.
 */
export function postOffer (ctx: OperationContext): Answer {
  const check = objectBody(ctx)
  if (!check.ok) return check.answer
  const named = ctx.values.bookingRequestId
  const body = named === undefined || check.value.idRequestBooking !== undefined ? check.value : { ...check.value, idRequestBooking: named }
  if (named !== undefined && body.idRequestBooking !== named) return message(400, 'Field idRequestBooking tidak sesuai')
  for (const field of ['idRequestBooking', 'idPlatform', 'idServiceOrder'] as const) {
    if (!nonEmptyString(body[field])) return message(400, `Field ${field} wajib diisi dan berupa string`)
  }
  const price = body.hargaPenawaran
  if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) {
    return message(400, 'Field hargaPenawaran wajib berupa angka positif')
  }
  for (const field of ['waktuPenawaran', 'timestamp'] as const) {
    const value = body[field]
    if (typeof value !== 'string' || !DATETIME.test(value)) return message(400, `Field ${field} harus berformat YYYY-MM-DD HH:MM:SS`)
  }
  if (body.idPlatform !== ctx.config.platformId) return message(400, 'idPlatform tidak terdaftar')
  const id = body.idRequestBooking as string
  if (!ctx.dataset.bookingRequestIds.includes(id)) return message(404, UNKNOWN_BOOKING)
  return json(200, { message: 'Penawaran berhasil dikirim', idRequestBooking: id, idServiceOrder: body.idServiceOrder })
}

/** 4.9: booked notification (2.11) for the booking request named in the query string. */
export function postBooked (ctx: OperationContext): Answer {
  const check = objectBody(ctx)
  if (!check.ok) return check.answer
  const body = check.value
  const booked = body.isBooked
  if (booked !== 0 && booked !== 1) return message(400, 'Field isBooked wajib berupa 0 atau 1')
  if (typeof body.booking_note !== 'string') return message(400, 'Field booking_note wajib berupa string')
  const id = ctx.values.bookingRequestId ?? ''
  if (!ctx.dataset.bookingRequestIds.includes(id)) return message(404, UNKNOWN_BOOKING)
  return json(200, { message: 'Booking berhasil diperbarui', idRequestBooking: id, isBooked: booked })
}
