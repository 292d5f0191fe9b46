import { request as httpRequest } from 'node:http'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, until, type TestClient } from '../helpers/helper.ts'

const KEY = 'key-yard-secret-4c1d'
const CLIENTS: TestClient[] = [
  { name: 'yard-app', key: KEY, scopes: ['bookings:write', 'sp2:finalize', 'customs:read'] }
]
const YARD = { authorization: `Bearer ${KEY}` }
const SECRET_NOTE = 'note-text-that-must-not-be-logged'
const SECRET_ORDER = 'SO-never-logged-77'

type Line = Record<string, unknown>
const auditLines = (logs: Line[]) => logs.filter(l => l.audit === true)

test('each write leaves exactly one audit line with who, what, which document, the hub status ' +
  'and the outcome', async (t) => {
  const { app, logs, rawLogs } = await build(t, { clients: CLIENTS })
  const offer = { serviceOrderId: SECRET_ORDER, price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
  const requests = [
    {
      name: 'offer',
      method: 'POST' as const,
      url: `/v1/bookings/${F.bookingRequestId}/offers`,
      payload: offer,
      headers: { ...YARD, 'idempotency-key': 'idem-offer-1', 'x-request-id': 'audit-1' }
    },
    {
      name: 'offer replayed',
      method: 'POST' as const,
      url: `/v1/bookings/${F.bookingRequestId}/offers`,
      payload: offer,
      headers: { ...YARD, 'idempotency-key': 'idem-offer-1', 'x-request-id': 'audit-2' }
    },
    {
      name: 'booked, hub 500',
      method: 'POST' as const,
      url: '/v1/bookings/SBX-500/booked',
      payload: { booked: true, note: SECRET_NOTE },
      headers: { ...YARD, 'x-request-id': 'audit-3' }
    },
    {
      name: 'booked, hub 422',
      method: 'POST' as const,
      url: '/v1/bookings/SBX-422/booked',
      payload: { booked: true },
      headers: { ...YARD, 'x-request-id': 'audit-4' }
    },
    {
      name: 'finalization',
      method: 'POST' as const,
      url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`,
      headers: { ...YARD, 'x-request-id': 'audit-5' }
    },
    {
      name: 'no key',
      method: 'POST' as const,
      url: `/v1/bookings/${F.bookingRequestId}/booked`,
      payload: { booked: true, note: SECRET_NOTE },
      headers: { 'x-request-id': 'audit-6' }
    },
    {
      name: 'invalid body',
      method: 'POST' as const,
      url: `/v1/bookings/${F.bookingRequestId}/booked`,
      payload: { booked: 'yes' },
      headers: { ...YARD, 'x-request-id': 'audit-7' }
    },
    {
      name: 'a read',
      method: 'GET' as const,
      url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
      headers: { ...YARD, 'x-request-id': 'audit-8' }
    }
  ]
  for (const r of requests) {
    await app.inject({
      method: r.method,
      url: r.url,
      headers: r.headers,
      ...('payload' in r ? { payload: r.payload } : {})
    })
  }

  const lines = auditLines(logs)
  const byId = (id: string) => lines.filter((l) => l.requestId === id)
  for (let i = 1; i <= 7; i++) {
    t.equal(byId(`audit-${i}`).length, 1, `${requests[i - 1]!.name}: ` + 'one line')
  }
  t.equal(byId('audit-8').length, 0, 'a read is not audited')
  t.equal(lines.length, 7)

  const common = { audit: true, level: 30, msg: 'audit' }
  t.match(byId('audit-1')[0], {
    ...common,
    client: 'yard-app',
    operation: 'DetilBooking',
    bookingRequestId: F.bookingRequestId,
    upstreamStatus: 200,
    replayed: false,
    statusCode: 200
  })
  t.match(byId('audit-2')[0], {
    client: 'yard-app',
    operation: 'DetilBooking',
    bookingRequestId: F.bookingRequestId,
    upstreamStatus: 200,
    replayed: true,
    statusCode: 200
  })
  t.match(byId('audit-3')[0], {
    client: 'yard-app',
    operation: 'DetilBooking/isBooked',
    bookingRequestId: 'SBX-500',
    upstreamStatus: 500,
    replayed: false,
    statusCode: 502
  })
  t.match(byId('audit-4')[0], {
    operation: 'DetilBooking/isBooked',
    bookingRequestId: 'SBX-422',
    upstreamStatus: 422,
    statusCode: 422
  })
  t.match(byId('audit-5')[0], {
    client: 'yard-app',
    operation: 'document_sp2/final',
    sp2Id: F.sp2.sp2Id,
    upstreamStatus: 200,
    replayed: false,
    statusCode: 200
  })
  t.match(byId('audit-6')[0], {
    client: null,
    operation: 'DetilBooking/isBooked',
    upstreamStatus: null,
    statusCode: 401
  })
  t.match(byId('audit-7')[0], { client: 'yard-app', upstreamStatus: null, statusCode: 400 })
  for (const line of lines) {
    t.same(
      Object.keys(line)
        .filter((k) => !['level', 'time', 'pid', 'hostname', 'msg'].includes(k))
        .sort(),
      [
        'audit',
        'client',
        'operation',
        line.sp2Id === undefined ? 'bookingRequestId' : 'sp2Id',
        'replayed',
        'requestId',
        'statusCode',
        'upstreamStatus'
      ].sort(),
      `${String(line.requestId)}: exactly the audit fields`
    )
  }

  const text = rawLogs.join('\n')
  for (const secret of [KEY, SECRET_NOTE, SECRET_ORDER, 'idem-offer-1']) {
    t.notOk(text.includes(secret), 'no ' + `log line holds ${secret}`)
  }
})

test('audit lines are written even when LOG_LEVEL is warn', async (t) => {
  const { app, logs } = await build(t, { clients: CLIENTS, logLevel: 'warn' })
  await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true },
    headers: YARD
  })
  t.equal(auditLines(logs).length, 1)
  t.equal(
    logs.filter((l) => l.level === 30 && l.audit !== true).length,
    0,
    'other info lines stay off'
  )
})

test('a caller hanging up while its write is at the hub still leaves the audit line', async (t) => {
  const { app, logs, sandbox } = await build(t, { clients: CLIENTS, sandbox: { latencyMs: 300 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const body = JSON.stringify({ booked: true })
  const req = httpRequest({
    port,
    host: '127.0.0.1',
    method: 'POST',
    path: `/v1/bookings/${F.bookingRequestId}/booked`,
    headers: {
      ...YARD,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-request-id': 'hung-up'
    }
  })
  req.on('error', () => {})
  req.end(body)
  // Hung up while the hub (300 ms latency) has the write, and the line is written once the hub
  // answers.
  await until(() => sandbox.count() === 1)
  req.destroy()
  await until(() => auditLines(logs).length > 0)
  t.equal(sandbox.count(), 1, 'the write reached the hub')
  t.match(auditLines(logs), [
    {
      requestId: 'hung-up',
      client: 'yard-app',
      upstreamStatus: 200,
      statusCode: 200,
      aborted: true
    }
  ])
})
