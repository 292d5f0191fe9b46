import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

const API_KEY = 'sk-live-7d1e0c9b2a4f'
const TOKEN = 'Bearer tok-live-3c5e8a1f9d0b'
const CALLER = 'Bearer caller-secret-66a1'

const REQUESTS: Array<{ method?: 'GET' | 'POST', url: string, payload?: object }> = [
  { url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` },
  { url: `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading` },
  { url: `/v1/sp2/documents?npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}` },
  { url: '/v1/customs/bc261/containers?blNo=SBX-401' },
  { url: '/v1/customs/bc261/containers?blNo=SBX-500' },
  { url: '/v1/customs/bc261/containers?blNo=SBX-MALFORMED' },
  { url: '/v1/customs/bc261/containers?blNo=SBX-RESET' },
  { url: '/v1/customs/bc261/containers?blNo=bad value' },
  { method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/offers`, payload: { serviceOrderId: 'SO-1', price: 1, offeredAt: '2024-03-01T08:15:00+07:00' } },
  { method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true } },
  { method: 'POST', url: '/v1/bookings/SBX-403/booked', payload: { booked: true } },
  { url: '/health/ready' },
  { url: '/metrics' },
  { url: '/openapi.json' },
  { url: '/nowhere' }
]

test('secrets never reach a response, a header or a log line', async (t) => {
  const { app, rawLogs } = await build(t, {
    env: { UPSTREAM_API_KEY: API_KEY, UPSTREAM_ACCESS_TOKEN: TOKEN, LOG_LEVEL: 'trace' },
    sandbox: { apiKey: API_KEY, accessToken: TOKEN }
  })
  let served = 0
  for (const r of REQUESTS) {
    const res = await app.inject({ method: r.method ?? 'GET', url: r.url, headers: { authorization: CALLER }, ...(r.payload ? { payload: r.payload } : {}) })
    if (res.statusCode === 200) served++
    const seen = res.body + JSON.stringify(res.headers)
    for (const secret of [API_KEY, TOKEN, 'tok-live-3c5e8a1f9d0b', CALLER]) {
      t.notOk(seen.includes(secret), `${r.url}: response carries no secret`)
    }
  }
  t.ok(served >= 6, 'the credentials worked: real answers came back')
  t.ok(rawLogs.length > 20, 'logs were captured')
  const logs = rawLogs.join('\n')
  for (const secret of [API_KEY, 'tok-live-3c5e8a1f9d0b', 'caller-secret-66a1']) {
    t.notOk(logs.includes(secret), `no log line carries ${secret.slice(0, 8)}…`)
  }
})

test('a logged object holding the secrets is redacted', async (t) => {
  const { app, rawLogs } = await build(t, { env: { UPSTREAM_API_KEY: API_KEY, UPSTREAM_ACCESS_TOKEN: TOKEN }, sandbox: { apiKey: API_KEY, accessToken: TOKEN } })
  // A careless log of the whole configuration or of request headers must not leak them.
  app.log.info({ config: app.config, req: { headers: { authorization: CALLER, 'customs-api-key': API_KEY } } }, 'careless')
  const line = rawLogs.find(l => l.includes('careless')) ?? ''
  t.ok(line.length > 0)
  t.notOk(line.includes(API_KEY))
  t.notOk(line.includes('tok-live-3c5e8a1f9d0b'))
  t.notOk(line.includes('caller-secret-66a1'))
})
