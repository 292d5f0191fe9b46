import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'

/**
 * Bad input gets VALIDATION_FAILED naming the field and the rule, and
 * nothing reaches the hub (the sandbox counts every request it receives).
 */
const good = {
  npwp: F.sp2.npwp,
  blNo: F.sp2.blNo,
  blDate: F.sp2.blDate,
  containerNo: F.sp2.containerNo
}
const qs = (params: Record<string, string | undefined>) =>
  new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)
  ).toString()
const offer = { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }

const CASES: Array<{
  name: string
  method?: 'GET' | 'POST'
  url: string
  payload?: unknown
  headers?: Record<string, string>
  field: string
  status?: number
  code?: string
}> = [
  {
    name: 'NPWP too short',
    url: '/v1/customs/bc20/bills-of-lading?npwp=12345',
    field: 'query.npwp'
  },
  {
    name: 'NPWP of 17 digits',
    url: '/v1/customs/bc20/bills-of-lading?npwp=01234567890123456',
    field: 'query.npwp'
  },
  {
    name: 'NPWP with letters',
    url: '/v1/customs/bc20/bills-of-lading?npwp=01234567890100A',
    field: 'query.npwp'
  },
  { name: 'NPWP missing', url: '/v1/customs/bc20/bills-of-lading', field: 'query.npwp' },
  { name: 'NPWP in the path', url: '/v1/taxpayers/0123/bills-of-lading', field: 'path.npwp' },
  {
    name: 'unknown query parameter',
    url: `/v1/customs/bc261/containers?blNo=${F.containers.kontainerbc261.noBl}&blDate=2024-01-01`,
    field: 'query.blDate'
  },
  {
    name: 'a parameter the operation needs is missing',
    url: '/v1/customs/bc23/containers?blNo=ABC123',
    field: 'query.blDate'
  },
  {
    name: 'impossible date',
    url: `/v1/sp2/documents?${qs({ ...good, containerNo: undefined, blDate: '2024-02-30' })}`,
    field: 'query.blDate'
  },
  {
    name: 'compact date',
    url: `/v1/sp2/documents?${qs({ ...good, containerNo: undefined, blDate: '20240217' })}`,
    field: 'query.blDate'
  },
  { name: 'month 13', url: '/v1/customs/bc25/containers?blDate=2024-13-01', field: 'query.blDate' },
  {
    name: 'year 0000',
    url: '/v1/customs/bc25/containers?blDate=0000-01-01',
    field: 'query.blDate'
  },
  {
    name: 'year 1899',
    url: `/v1/sp2/documents?${qs({ ...good, containerNo: undefined, blDate: '1899-12-31' })}`,
    field: 'query.blDate'
  },
  {
    name: 'year 2101',
    url: '/v1/customs/bc27/containers?blDate=2101-01-01',
    field: 'query.blDate'
  },
  {
    name: 'year 9999',
    url: '/v1/customs/bc20/containers?blDate=9999-12-31',
    field: 'query.blDate'
  },
  {
    name: 'container check digit wrong',
    url: `/v1/sp2/containers?${qs({ ...good, containerNo: 'TCLU6470802' })}`,
    field: 'query.containerNo'
  },
  {
    name: 'container number malformed',
    url: `/v1/sp2/containers?${qs({ ...good, containerNo: 'TCL6470801' })}`,
    field: 'query.containerNo'
  },
  {
    name: 'BL number with traversal',
    url: '/v1/customs/bc28/containers?blNo=../../etc/passwd',
    field: 'query.blNo'
  },
  {
    name: 'BL number with a space',
    url: '/v1/customs/bc28/containers?blNo=AB%20CD',
    field: 'query.blNo'
  },
  {
    name: 'BL number too long',
    url: `/v1/customs/bc28/containers?blNo=${'A'.repeat(36)}`,
    field: 'query.blNo'
  },
  {
    name: 'BL number with a control character',
    url: '/v1/customs/bc28/containers?blNo=AB%0ACD',
    field: 'query.blNo'
  },
  {
    name: 'PIB number with a slash',
    url: `/v1/customs/bc20/declarations/12%2F34?npwp=${F.declaration.npwp}`,
    field: 'path.pibNo'
  },
  {
    name: 'PIB number too long',
    url: `/v1/customs/bc20/declarations/${'9'.repeat(31)}?npwp=${F.declaration.npwp}`,
    field: 'path.pibNo'
  },
  {
    name: 'SP2 id not a UUID',
    method: 'POST',
    url: '/v1/sp2/documents/not-a-uuid/finalization',
    field: 'path.sp2Id'
  },
  {
    name: 'booking id with dots only',
    method: 'POST',
    url: '/v1/bookings/../offers',
    payload: offer,
    field: '',
    status: 404,
    code: 'NOT_FOUND'
  },
  {
    name: 'booking id with a space',
    method: 'POST',
    url: '/v1/bookings/A%20B/offers',
    payload: offer,
    field: 'path.bookingRequestId'
  },
  {
    name: 'price negative',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { ...offer, price: -1 },
    field: 'body.price'
  },
  {
    name: 'price with three decimals',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { ...offer, price: 10.125 },
    field: 'body.price'
  },
  {
    name: 'price as a string',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { ...offer, price: 'ten' },
    field: 'body.price'
  },
  {
    name: 'offeredAt without offset',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { ...offer, offeredAt: '2024-03-01 08:15:00' },
    field: 'body.offeredAt'
  },
  {
    name: 'serviceOrderId missing',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { price: 1, offeredAt: offer.offeredAt },
    field: 'body.serviceOrderId'
  },
  {
    name: 'unknown body field',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { ...offer, idPlatform: 'EVIL' },
    field: 'body.idPlatform'
  },
  {
    name: 'booked not a boolean',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: 'yes' },
    field: 'body.booked'
  },
  {
    name: 'note too long',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true, note: 'x'.repeat(501) },
    field: 'body.note'
  },
  {
    name: 'body missing',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    field: ''
  },
  {
    name: 'malformed JSON',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: '{"booked": tru',
    headers: { 'content-type': 'application/json' },
    field: ''
  },
  {
    name: 'not JSON',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: 'booked=true',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    field: '',
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE'
  },
  {
    name: 'body too large',
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true, note: 'x'.repeat(70_000) },
    field: '',
    status: 413,
    code: 'PAYLOAD_TOO_LARGE'
  }
]

test('bad input is rejected with the field and the rule, and nothing reaches the ' +
  'hub', async (t) => {
  const { app, sandbox } = await build(t)
  for (const c of CASES) {
    const res = await app.inject({
      method: c.method ?? 'GET',
      url: c.url,
      ...(c.payload === undefined ? {} : { payload: c.payload as string }),
      headers: c.headers ?? {}
    })
    const body = res.json()
    t.equal(res.statusCode, c.status ?? 400, `${c.name}: status`)
    t.equal(body.code, c.code ?? 'VALIDATION_FAILED', `${c.name}: code`)
    t.equal(body.requestId, res.headers['x-request-id'], `${c.name}: request id`)
    if (c.field !== '') {
      t.ok(body.message.includes(c.field), `${c.name}: message names ${c.field} (${body.message})`)
      t.ok(
        body.details?.some(
          (d: { field: string; rule: string }) => d.field === c.field && d.rule.length > 5
        ),
        `${c.name}: details name the field and rule`
      )
    }
  }
  t.equal(sandbox.count(), 0, 'the hub received nothing')
})

test('a body with __proto__ changes nothing and is refused', async (t) => {
  const { app, sandbox } = await build(t)
  const res = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: '{"booked": true, "__proto__": {"polluted": true}}',
    headers: { 'content-type': 'application/json' }
  })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'VALIDATION_FAILED')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(sandbox.count(), 0)
})

test('unknown routes answer the error envelope', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/v1/nothing-here?x=1' })
  t.equal(res.statusCode, 404)
  const body = res.json()
  t.equal(body.code, 'NOT_FOUND')
  t.equal(body.error, 'Not Found')
  t.match(body.message, /\/v1\/nothing-here/)
  t.notMatch(body.message, /x=1/)
})

test('blDate: the years 1900 to 2100 are accepted, the rule says so', async (t) => {
  const { app } = await build(t)
  for (const blDate of ['1900-01-01', '1999-12-31', '2024-02-29', '2100-12-31']) {
    t.equal(
      (await app.inject({ url: `/v1/customs/bc25/containers?blDate=${blDate}` })).statusCode,
      200,
      blDate
    )
  }
  const res = await app.inject({ url: '/v1/customs/bc25/containers?blDate=0000-01-01' })
  t.same(res.json().details, [
    {
      field: 'query.blDate',
      rule: 'must be a real calendar date written YYYY-MM-DD, in the years 1900 to 2100'
    }
  ])
  // The sandbox's magic dates fall inside the range, so faults can still be asked for through the
  // gateway.
  t.equal(
    (await app.inject({ url: '/v1/customs/bc25/containers?blDate=1950-01-13' })).statusCode,
    503,
    'SBX 503 as a date'
  )
})

test('offeredAt: a leap second, a year outside 1900-2100, or a hub-local time outside them is a ' +
  '400 naming the rule; the edges inside reach the hub as written', async (t) => {
  // The hub's zone is +07:00 (the hub profile's timeZone by default).
  const { app, sandbox } = await build(t)
  const url = `/v1/bookings/${F.bookingRequestId}/offers`
  const refused: Array<[string, RegExp]> = [
    ['2024-06-30T23:59:60Z', /^must not be a leap second: seconds are 00 to 59$/],
    ['9999-12-31T23:59:59+00:00', /^must be in the years 1900 to 2100$/],
    ['0000-01-01T00:00:00Z', /^must be in the years 1900 to 2100$/],
    ['1899-12-31T23:59:59+07:00', /^must be in the years 1900 to 2100$/],
    ['2101-01-01T00:00:00+07:00', /^must be in the years 1900 to 2100$/],
    [
      '2100-12-31T23:00:00-05:00',
      /^must be in the years 1900 to 2100 in the hub's local time \(\+07:00\) too$/
    ],
    [
      '1900-01-01T00:00:00+08:00',
      /^must be in the years 1900 to 2100 in the hub's local time \(\+07:00\) too$/
    ],
    ['2024-02-30T08:15:00+07:00', /^must be an ISO 8601 date-time with an offset/],
    ['2024-03-01T24:00:00+07:00', /^must be an ISO 8601 date-time with an offset/],
    ['2024-03-01 08:15:00+07:00', /^must be an ISO 8601 date-time with an offset/],
    ['2024-03-01T08:15:00+07:00\u202e', /found U\+202E \(a format character\) at character 26/]
  ]
  for (const [offeredAt, rule] of refused) {
    const res = await app.inject({ method: 'POST', url, payload: { ...offer, offeredAt } })
    t.equal(res.statusCode, 400, `${offeredAt}: ${res.body.slice(0, 200)}`)
    t.match(res.json().details, [{ field: 'body.offeredAt', rule }], offeredAt)
  }
  t.equal(sandbox.count(), 0, 'none reached the hub')

  const accepted: Array<[string, string]> = [
    ['1900-01-01T00:00:00+07:00', '1900-01-01 00:00:00'],
    ['2100-12-31T23:59:59+07:00', '2100-12-31 23:59:59'],
    ['2100-12-31T16:59:59Z', '2100-12-31 23:59:59'],
    ['2024-03-01t08:15:00.123456789z', '2024-03-01 15:15:00'],
    ['2024-02-29T23:30:00-10:00', '2024-03-01 16:30:00']
  ]
  for (const [offeredAt, sent] of accepted) {
    const res = await app.inject({ method: 'POST', url, payload: { ...offer, offeredAt } })
    t.equal(res.statusCode, 200, offeredAt)
    t.equal(
      (sandbox.requests.at(-1)?.body as { waktuPenawaran?: string }).waktuPenawaran,
      sent,
      `${offeredAt} is sent as ${sent}`
    )
    t.equal(res.json().data.offeredAt, `${sent.replace(' ', 'T')}+07:00`)
  }
})
