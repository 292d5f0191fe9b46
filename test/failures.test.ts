import { createServer } from 'node:net'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

/**
 * The failure matrix: each sandbox fault through the gateway, mapped to the
 * contract's status and code (docs/api.md#the-envelope). Timeouts are short here so the
 * hang and slow faults finish quickly.
 */
const FAST = { UPSTREAM_HEADERS_TIMEOUT_MS: '400', UPSTREAM_BODY_TIMEOUT_MS: '400' }

const MATRIX: Array<{ fault: string, status: number, code?: string, upstreamMessage?: boolean, retryAfter?: string }> = [
  { fault: '500', status: 502, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  { fault: '502', status: 502, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  { fault: '503', status: 503, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  { fault: '504', status: 502, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  { fault: '404', status: 404, code: 'UPSTREAM_NOT_FOUND', upstreamMessage: true },
  { fault: '401', status: 502, code: 'UPSTREAM_AUTH_FAILED', upstreamMessage: true },
  { fault: '403', status: 502, code: 'UPSTREAM_AUTH_FAILED', upstreamMessage: true },
  { fault: '429', status: 503, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: true, retryAfter: '7' },
  { fault: '400', status: 400, code: 'UPSTREAM_REJECTED', upstreamMessage: true },
  { fault: '422', status: 422, code: 'UPSTREAM_REJECTED', upstreamMessage: true },
  { fault: 'MALFORMED', status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  { fault: 'HTML', status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  { fault: 'RESET', status: 502, code: 'UPSTREAM_UNAVAILABLE' },
  { fault: 'NOKEY', status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  { fault: 'TRUNCATED', status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  { fault: 'SHAPE', status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  { fault: 'HANG', status: 504, code: 'UPSTREAM_TIMEOUT' },
  { fault: 'SLOW', status: 504, code: 'UPSTREAM_TIMEOUT' },
  { fault: 'EMPTY', status: 200 },
  { fault: 'DRIFT', status: 200 }
]

/** One route of each response shape, with the fault placed in the parameter it fits. */
const ROUTES: Array<{ name: string, request: (fault: string, code: string) => { method?: 'GET' | 'POST', url: string, payload?: object } }> = [
  { name: 'keyed list (containers)', request: (fault) => ({ url: `/v1/customs/bc261/containers?blNo=SBX-${fault}` }) },
  { name: 'bare list (SP2 documents)', request: (_fault, code) => ({ url: `/v1/sp2/documents?npwp=990000000000${code}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}` }) },
  { name: 'record (declaration)', request: (fault) => ({ url: `/v1/customs/bc20/declarations/SBX-${fault}?npwp=${F.declaration.npwp}` }) },
  { name: 'write (offer)', request: (fault) => ({ method: 'POST', url: `/v1/bookings/SBX-${fault}/offers`, payload: { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' } }) }
]

const CODES: Record<string, string> = { SLOW: '001', HANG: '002', MALFORMED: '900', HTML: '901', RESET: '902', EMPTY: '903', DRIFT: '904', NOKEY: '905', TRUNCATED: '906', SHAPE: '907' }

for (const route of ROUTES) {
  test(`failure matrix through a ${route.name} route`, async (t) => {
    const { app } = await build(t, { env: FAST, sandbox: { slowMs: 1500 } })
    for (const row of MATRIX) {
      // EMPTY and DRIFT are about lists; records and writes have none.
      if (['EMPTY', 'DRIFT'].includes(row.fault) && !route.name.includes('list')) continue
      // docs/hub.md#offer-answer-and-its-credentials: the offer answer's fields are not shown, so any object is accepted.
      if (row.fault === 'NOKEY' && route.name.startsWith('write')) {
        t.equal((await app.inject(route.request(row.fault, CODES[row.fault] ?? ''))).statusCode, 200, 'NOKEY: an unspecified answer is passed on')
        continue
      }
      const code = CODES[row.fault] ?? row.fault
      const started = performance.now()
      const res = await app.inject(route.request(row.fault, code))
      const ms = Math.round(performance.now() - started)
      t.equal(res.statusCode, row.status, `${row.fault}: status (${ms} ms)`)
      if (row.code === undefined) continue
      const body = res.json()
      t.equal(body.code, row.code, `${row.fault}: code`)
      t.equal(body.statusCode, row.status)
      t.type(body.message, 'string')
      t.equal(body.requestId, res.headers['x-request-id'])
      if (row.upstreamMessage === true) t.type(body.upstreamMessage, 'string', `${row.fault}: upstreamMessage passed on`)
      if (row.upstreamMessage === false) t.notOk('upstreamMessage' in body, `${row.fault}: a 5xx passes no message on (an HTML page has none; a JSON one may name hosts and files)`)
      if (row.retryAfter !== undefined) t.equal(res.headers['retry-after'], row.retryAfter, `${row.fault}: retry-after passed on`)
    }
  })
}

test('SLOW within the timeouts is just slow', async (t) => {
  const { app } = await build(t, { sandbox: { slowMs: 300 } })
  const res = await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-SLOW' })
  t.equal(res.statusCode, 200)
})

test('a refused connection is UPSTREAM_UNAVAILABLE', async (t) => {
  // A port that was just free: nothing listens on it.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
  const dead = `http://127.0.0.1:${port}`
  const { app } = await build(t, { env: { UPSTREAM_HUB_URL: dead, UPSTREAM_BASE_URL: dead } })
  const res = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_UNAVAILABLE')
})

test('the hub rejecting the gateway\'s own credentials is a 502, never the caller\'s 401', async (t) => {
  const { app } = await build(t, { env: { UPSTREAM_API_KEY: 'not-the-key', UPSTREAM_ACCESS_TOKEN: 'not-the-token' } })
  const res = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_AUTH_FAILED')
  t.notMatch(res.body, /not-the-(key|token)/)
})

test('a hub body over the size limit is cut off as UPSTREAM_BAD_RESPONSE', async (t) => {
  const { app } = await build(t, { env: { UPSTREAM_MAX_RESPONSE_BYTES: '4096' } })
  const res = await app.inject({ url: `/v1/sp2/documents?npwp=${F.benchmark.twenty.npwp}&blNo=${F.benchmark.twenty.blNo}&blDate=${F.benchmark.twenty.blDate}` })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_BAD_RESPONSE')
})

test('a failed hub call is logged with its outcome and request id', async (t) => {
  const { app, logs } = await build(t)
  const res = await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-500', headers: { 'x-request-id': 'trace-500' } })
  t.equal(res.statusCode, 502)
  const line = logs.find(l => l.msg === 'upstream call failed')
  t.equal(line?.outcome, 'unavailable')
  t.equal(line?.requestId, 'trace-500')
})
