import { toUpstreamDateTime } from '../domain/dates.ts'

/** Request bodies in the hub's names (docs/reference/glossary.md#request-bodies). */

export interface OfferInput { serviceOrderId: string, price: number, offeredAt: string }

/** The offer: all six fields; the platform id is ours, the timestamp is now. */
export function toUpstreamOffer (bookingRequestId: string, offer: OfferInput, platformId: string, offset: string, now = new Date()) {
  return {
    idRequestBooking: bookingRequestId,
    idPlatform: platformId,
    idServiceOrder: offer.serviceOrderId,
    hargaPenawaran: offer.price,
    waktuPenawaran: toUpstreamDateTime(offer.offeredAt, offset),
    timestamp: toUpstreamDateTime(now, offset)
  }
}

/** The booked notification: both fields. */
export function toUpstreamBooked (booked: boolean, note: string) {
  return { isBooked: booked ? 1 : 0, booking_note: note }
}

/** The hub's description leaves this body open (docs/hub.md#open-points): our default. */
export function toUpstreamFinalization (sp2Id: string) {
  return { id_document_sp2: sp2Id }
}

/**
 * A write's answer (catalogue/resources.ts OfferAnswer, BookedAnswer,
 * FinalizationAnswer): the write in the API's words, from the request the
 * hub accepted, then whatever else the hub answered (already in our names);
 * the hub's echoes of the same fields give way to what was sent.
 */
export function writeAnswer (facts: Record<string, unknown>, hub: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...facts }
  if (hub !== null && typeof hub === 'object' && !Array.isArray(hub)) {
    for (const [key, value] of Object.entries(hub)) if (!(key in facts)) out[key] = value
  }
  return out
}
