// Type tests, checked by `npm run typecheck` and test/client/types.test.ts:
// every line after a `@ts-expect-error` must fail to compile, on that line
// and for the reason given; everything else must compile.
import { createGatewayClient, subscribeEvents, type BookedEvent, type ErrorEnvelope } from '../src/index.ts'

const client = createGatewayClient({ baseUrl: 'http://localhost:3000', apiKey: 'cgw_key' })
const npwp = '012345678901000'

// Right calls compile, and what they answer is typed.
const bls = await client.GET('/v1/taxpayers/{npwp}/bills-of-lading', { params: { path: { npwp } } })
if (bls.error !== undefined) {
  const envelope: ErrorEnvelope = bls.error
  envelope.requestId satisfies string
  envelope.details?.[0]?.field satisfies string | undefined
  // @ts-expect-error the error is the gateway's envelope, which has no such field
  console.log(bls.error.reason)
} else {
  bls.data.meta.count satisfies number
  bls.data.data[0]?.documentType satisfies 'bc16' | 'bc20' | 'bc23' | undefined
  bls.data.data[0]?.blNo satisfies string | undefined
  const first = bls.data.data[0]
  if (first !== undefined) {
    // The BL→SP2 flow compiles without a guard: a BL entry always has its number and its date.
    first.blDate satisfies string
    await client.GET('/v1/sp2/documents', { params: { query: { npwp, blNo: first.blNo, blDate: first.blDate } } })
    await client.GET('/v1/shipments/{blNo}', { params: { path: { blNo: first.blNo }, query: { npwp, blDate: first.blDate, documentType: first.documentType } } })
    // What the hub sends beyond the documented fields is under hubExtra, untyped.
    first.hubExtra?.someHubField satisfies unknown
    // @ts-expect-error a misspelt field of an answer does not compile
    console.log(first.blNumbr)
    // @ts-expect-error a field the hub sends beyond the documented ones is not beside ours
    console.log(first.someHubField)
  }
}
await client.GET('/v1/customs/bc23/containers', { params: { query: { blNo: 'MEDUSUB5040963', blDate: '2024-02-01' } } })
await client.POST('/v1/bookings/{bookingRequestId}/offers', {
  params: { path: { bookingRequestId: 'BKG-20240301-0001' }, header: { 'idempotency-key': 'a-key-the-caller-keeps-for-retries' } },
  body: { serviceOrderId: 'SO-1', price: 1250000.5, offeredAt: '2024-03-01T08:15:00+07:00' }
})

// @ts-expect-error a path the gateway does not have
await client.GET('/v1/customs/bc99/bills-of-lading', { params: { query: { npwp } } })
// @ts-expect-error a GET of a POST route
await client.GET('/v1/bookings/{bookingRequestId}/offers', { params: { path: { bookingRequestId: 'B' } } })
// @ts-expect-error a required query parameter left out
await client.GET('/v1/customs/bc16/bills-of-lading', { params: { query: {} } })
// @ts-expect-error no parameters at all on a route that requires one
await client.GET('/v1/customs/bc16/bills-of-lading')
// @ts-expect-error a required path parameter left out
await client.GET('/v1/taxpayers/{npwp}/bills-of-lading', { params: { path: {} } })
// @ts-expect-error a misnamed query parameter
await client.GET('/v1/customs/bc16/bills-of-lading', { params: { query: { NPWP: npwp } } })
// @ts-expect-error a parameter of the wrong type
await client.GET('/v1/customs/bc16/bills-of-lading', { params: { query: { npwp: 12345678901000 } } })
// @ts-expect-error a parameter the route does not take (BC 2.0 containers take blDate only)
await client.GET('/v1/customs/bc20/containers', { params: { query: { blDate: '2024-02-17', blNo: 'COSUMKS9061740' } } })
// @ts-expect-error a body field too many
await client.POST('/v1/bookings/{bookingRequestId}/offers', { params: { path: { bookingRequestId: 'B' } }, body: { serviceOrderId: 'SO-1', price: 1, offeredAt: '2024-03-01T08:15:00+07:00', currency: 'IDR' } })
// @ts-expect-error a required body field left out
await client.POST('/v1/bookings/{bookingRequestId}/offers', { params: { path: { bookingRequestId: 'B' } }, body: { serviceOrderId: 'SO-1', price: 1 } })
// @ts-expect-error a body field of the wrong type
await client.POST('/v1/bookings/{bookingRequestId}/booked', { params: { path: { bookingRequestId: 'B' } }, body: { booked: 1 } })
// @ts-expect-error a body on a route that takes none
await client.POST('/v1/sp2/documents/{sp2Id}/finalization', { params: { path: { sp2Id: 'b574cfab-cbef-4bd7-891b-49ff41d85755' } }, body: { finished: true } })
// @ts-expect-error a POST without the body its route requires
await client.POST('/v1/bookings/{bookingRequestId}/booked', { params: { path: { bookingRequestId: 'B' } } })
// @ts-expect-error a misspelt optional parameter (the caller's Idempotency-Key)
await client.POST('/v1/bookings/{bookingRequestId}/booked', { params: { path: { bookingRequestId: 'B' }, header: { idempotencyKey: 'k' } }, body: { booked: true } })

// A shipment in one call: each part typed as its own route answers it, null when its source failed.
const shipment = await client.GET('/v1/shipments/{blNo}', { params: { path: { blNo: 'COSUMKS9061740' }, query: { npwp, blDate: '2024-02-17', documentType: 'bc20' } } })
if (shipment.data !== undefined) {
  const { declarations, containers, sp2Documents } = shipment.data.data
  declarations?.[0]?.pibNo satisfies string | undefined
  containers?.[0]?.containerNo satisfies string | undefined
  sp2Documents?.[0]?.containers[0]?.gatePass satisfies string | null | undefined
  // Fields the hub always sends are there: no guard between a document and its customs document.
  sp2Documents?.[0]?.customsDocument.documentId satisfies number | undefined
  // @ts-expect-error a misspelt field of a nested answer does not compile either
  console.log(sp2Documents?.[0]?.customsDocument.blNumbr)
  shipment.data.meta.sources[0]?.status satisfies 'ok' | 'failed' | 'none' | undefined
  // @ts-expect-error a part may be null: its source failed or has no lookup
  console.log(sp2Documents.length)
}
// @ts-expect-error a document type the gateway does not know
await client.GET('/v1/shipments/{blNo}', { params: { path: { blNo: 'B' }, query: { npwp, blDate: '2024-02-17', documentType: 'bc99' } } })
// @ts-expect-error the shipment needs the BL's document type
await client.GET('/v1/shipments/{blNo}', { params: { path: { blNo: 'B' }, query: { npwp, blDate: '2024-02-17' } } })

// A conditional lookup: If-None-Match is a header every lookup takes.
const polled = await client.GET('/v1/sp2/documents', { params: { query: { npwp, blNo: 'B', blDate: '2024-02-17' }, header: { 'if-none-match': '"0123456789abcdef"' } } })
polled.response.status satisfies number
// @ts-expect-error a misspelt conditional header
await client.GET('/v1/sp2/documents', { params: { query: { npwp, blNo: 'B', blDate: '2024-02-17' }, header: { 'if-none-matches': '"0123456789abcdef"' } } })

// Events are typed from the document's BookedEvent.
const subscription = subscribeEvents({
  baseUrl: 'http://localhost:3000',
  apiKey: 'cgw_key',
  onEvent (event) {
    event satisfies BookedEvent
    event.type satisfies 'booking.booked'
    event.data.booked satisfies boolean
    // @ts-expect-error an event field that does not exist
    console.log(event.data.bookingId)
  },
  onError (error) {
    error.retryInMs satisfies number | undefined
  },
  // Resuming: where from, and what to do when the gateway cannot replay.
  lastEventId: '1709255700000-0',
  onReload (signal) {
    signal.reason satisfies 'expired' | 'lost' | 'unavailable'
    signal.id satisfies string
    // @ts-expect-error a reload reason that does not exist
    signal.reason satisfies 'timeout'
  }
})
subscription.lastEventId satisfies string | undefined
subscription.unsubscribe()
// @ts-expect-error lastEventId is a string (an event id)
subscribeEvents({ baseUrl: 'http://localhost:3000', onEvent () {}, lastEventId: 1709255700000 })
// @ts-expect-error onEvent is required
subscribeEvents({ baseUrl: 'http://localhost:3000' })
