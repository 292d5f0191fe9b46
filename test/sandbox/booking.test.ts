import t from 'tap'
import { SANDBOX_FIXTURES as F, SANDBOX_PLATFORM_ID } from '../../src/sandbox/index.ts'
import { AUTH, DEV, KEY, TOKEN, V3, call, post, qs, sandbox } from './helpers.ts'

const offer = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  idRequestBooking: F.bookingRequestId,
  idPlatform: SANDBOX_PLATFORM_ID,
  idServiceOrder: '1',
  hargaPenawaran: 1750000.5,
  waktuPenawaran: '2024-03-01 10:15:00',
  timestamp: '2024-03-01 10:15:02',
  ...overrides
})

const booked = (id: string): string => `/DetilBooking/isBooked/${qs({ idRequestBooking: id })}`

t.test('an offer is accepted with the API key alone, under both prefixes', async (t) => {
  const sb = await sandbox(t)
  for (const prefix of [V3, DEV]) {
    const res = await post(sb, `${prefix}/DetilBooking/`, offer(), KEY)
    t.equal(res.status, 200, prefix)
    t.same(res.body, {
      message: 'Penawaran berhasil dikirim',
      idRequestBooking: F.bookingRequestId,
      idServiceOrder: '1'
    })
  }
  const ignored = await post(sb, `${V3}/DetilBooking`, offer(), {
    ...KEY,
    authorization: 'whatever'
  })
  t.equal(ignored.status, 200, 'an Authorization header is ignored')
  const noKey = await post(sb, `${V3}/DetilBooking`, offer(), TOKEN)
  t.equal(noKey.status, 401)
  t.same(noKey.body, { message: 'Invalid API key' })
})

t.test('an offer body is validated field by field (2.10)', async (t) => {
  const sb = await sandbox(t)
  const cases: Array<[string, Record<string, unknown>]> = [
    ['no idRequestBooking', offer({ idRequestBooking: undefined })],
    ['no idPlatform', offer({ idPlatform: undefined })],
    ['no idServiceOrder', offer({ idServiceOrder: undefined })],
    ['numeric idServiceOrder', offer({ idServiceOrder: 1 })],
    ['no hargaPenawaran', offer({ hargaPenawaran: undefined })],
    ['string hargaPenawaran', offer({ hargaPenawaran: '1750000' })],
    ['negative hargaPenawaran', offer({ hargaPenawaran: -5 })],
    ['no waktuPenawaran', offer({ waktuPenawaran: undefined })],
    ['ISO waktuPenawaran', offer({ waktuPenawaran: '2024-03-01T10:15:00+07:00' })],
    ['no timestamp', offer({ timestamp: undefined })],
    ['timestamp without seconds', offer({ timestamp: '2024-03-01 10:15' })],
    ['another platform', offer({ idPlatform: 'PLT00027' })]
  ]
  for (const [name, body] of cases) {
    const res = await post(sb, `${V3}/DetilBooking`, body, KEY)
    t.equal(res.status, 400, name)
    t.match(res.body, { message: String }, name)
    t.equal(Object.keys(res.body as object).length, 1, `${name}: only a message`)
  }
  const notJson = await call(sb, 'POST', `${V3}/DetilBooking`, {
    headers: KEY,
    raw: '{"idRequestBooking":'
  })
  t.equal(notJson.status, 400)
  const array = await post(sb, `${V3}/DetilBooking`, [offer()], KEY)
  t.equal(array.status, 400)
  const empty = await call(sb, 'POST', `${V3}/DetilBooking`, { headers: KEY })
  t.equal(empty.status, 400)
  const unknown = await post(
    sb,
    `${V3}/DetilBooking`,
    offer({ idRequestBooking: F.unknownBookingRequestId }),
    KEY
  )
  t.equal(unknown.status, 404)
  t.match(unknown.body, { message: String })
})

t.test('the accepted idPlatform follows the platformId option', async (t) => {
  const sb = await sandbox(t, { platformId: 'PLT-GATEWAY' })
  t.equal(
    (await post(sb, `${V3}/DetilBooking`, offer({ idPlatform: 'PLT-GATEWAY' }), KEY)).status,
    200
  )
  t.equal((await post(sb, `${V3}/DetilBooking`, offer(), KEY)).status, 400)
})

t.test('a booked notification needs both headers and a 2.11 body', async (t) => {
  const sb = await sandbox(t)
  for (const prefix of [V3, DEV]) {
    const res = await post(sb, prefix + booked(F.bookingRequestId), {
      isBooked: 1,
      booking_note: 'Truk B 1234 XYZ'
    })
    t.equal(res.status, 200, prefix)
    t.same(res.body, {
      message: 'Booking berhasil diperbarui',
      idRequestBooking: F.bookingRequestId,
      isBooked: 1
    })
  }
  const zero = await post(sb, V3 + booked(F.bookingRequestIds[1] ?? ''), {
    isBooked: 0,
    booking_note: ''
  })
  t.same(zero.body, {
    message: 'Booking berhasil diperbarui',
    idRequestBooking: F.bookingRequestIds[1],
    isBooked: 0
  })

  t.equal(
    (await post(sb, V3 + booked(F.bookingRequestId), { isBooked: 1, booking_note: 'x' }, KEY))
      .status,
    401
  )
  t.equal(
    (await post(sb, V3 + booked(F.bookingRequestId), { isBooked: 1, booking_note: 'x' }, TOKEN))
      .status,
    401
  )

  for (const body of [
    { isBooked: true, booking_note: 'x' },
    { isBooked: 2, booking_note: 'x' },
    { isBooked: '1', booking_note: 'x' },
    { booking_note: 'x' },
    { isBooked: 1 },
    { isBooked: 1, booking_note: 5 }
  ]) {
    const res = await post(sb, V3 + booked(F.bookingRequestId), body)
    t.equal(res.status, 400, JSON.stringify(body))
  }
  const noId = await post(sb, `${V3}/DetilBooking/isBooked/`, { isBooked: 1, booking_note: 'x' })
  t.equal(noId.status, 400)
  t.match(noId.body, { message: /idRequestBooking/ })
  const inPath = await post(sb, `${V3}/DetilBooking/isBooked/${F.bookingRequestId}`, {
    isBooked: 1,
    booking_note: 'x'
  })
  t.equal(inPath.status, 404, 'idRequestBooking stays a query parameter')
  const unknown = await post(
    sb,
    V3 + booked(F.unknownBookingRequestId),
    { isBooked: 1, booking_note: 'x' },
    AUTH
  )
  t.equal(unknown.status, 404)
})
