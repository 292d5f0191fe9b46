import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'
import { HUBS } from '../helpers/hubs.ts'
import { driftSuite } from '../helpers/suites/drift.ts'
import { routeSuite } from '../helpers/suites/routes.ts'

// Every route against the sandbox without a profile, as the gateway reads the
// hub without one (test/helpers/suites/routes.ts; the same suite runs against each
// profile in test/profile/hub-profiles/), and what only the default reading shows.

routeSuite(HUBS.default)
// Without a profile, a list under another key than the document's is the only drift.
driftSuite(HUBS.default, { kontainerbc261: { 'answer-key': 1 } })

test('taxpayer route reports a failed source in meta and returns the others', async (t) => {
  // The hub rejects noblbc16 when its parameter has another name: one real failing source.
  const wrongName = { operations: { noblbc16: { params: { npwp: 'wrong_name' } } } }
  const { app } = await build(t, { profile: wrongName })
  const res = await app.inject({ url: `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading` })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.meta.complete, false)
  const [bc16, bc20, bc23] = body.meta.sources
  t.equal(bc16.status, 'failed')
  t.equal(bc16.code, 'UPSTREAM_REJECTED')
  t.type(bc16.upstreamMessage, 'string')
  t.equal(bc20.status, 'ok')
  t.equal(bc23.status, 'ok')
  t.equal(body.meta.count, F.taxpayer.bc20.length + F.taxpayer.bc23.length)
  t.notOk(body.data.some((d: { documentType: string }) => d.documentType === 'bc16'))
})

test('a list under an unexpected key is used when it is the only array, and the drift is ' +
  'logged', async (t) => {
  const { app, logs } = await build(t)
  const res = await app.inject({ url: '/v1/customs/bc28/containers?blNo=SBX-DRIFT' })
  t.equal(res.statusCode, 200, res.body)
  t.ok(Array.isArray(res.json().data))
  const drift = logs.find((l) => l.msg === 'upstream response key drift')
  t.ok(drift, 'drift logged')
  t.equal(drift?.expectedKey, 'data kontainer bc 28')
  t.type(drift?.requestId, 'string')
})

test('write answers hold one name per thing when the hub echoes the booking in another spelling ' +
  '(sandbox SNAKE)', async (t) => {
  const { app, sandbox } = await build(t)
  const offer = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { serviceOrderId: 'SBX-SNAKE', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
  })
  t.equal(offer.statusCode, 200, offer.body)
  t.same(
    offer.json().data,
    {
      bookingRequestId: F.bookingRequestId,
      serviceOrderId: 'SBX-SNAKE',
      price: 10,
      offeredAt: '2024-03-01T08:15:00+07:00',
      upstreamMessage: 'Penawaran berhasil dikirim'
    },
    'id_request_booking and id_service_order are ours already: dropped, not answered as ' +
    'idRequestBooking and idServiceOrder'
  )
  const booked = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true, note: 'SBX-SNAKE' }
  })
  t.equal(booked.statusCode, 200, booked.body)
  t.same(booked.json().data, {
    bookingRequestId: F.bookingRequestId,
    booked: true,
    note: 'SBX-SNAKE',
    upstreamMessage: 'Booking berhasil diperbarui'
  })
  t.same(
    Object.keys(sandbox.requests.at(-1)?.body as object),
    ['isBooked', 'booking_note'],
    'what the gateway sent is unchanged'
  )
})
