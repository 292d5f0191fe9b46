import { createServer } from 'node:net'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'
import { HUBS } from '../helpers/hubs.ts'
import { failureSuite } from '../helpers/suites/failures.ts'

// Each sandbox fault through a route of each response shape
// (test/helpers/suites/failures.ts; the same suite runs against each profile in
// test/profile/hub-profiles/).
failureSuite(HUBS.default)

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

test("the hub rejecting the gateway's own credentials is a 502, never the caller's " +
  '401', async (t) => {
  const { app } = await build(t, {
    env: { UPSTREAM_API_KEY: 'not-the-key', UPSTREAM_ACCESS_TOKEN: 'not-the-token' }
  })
  const res = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_AUTH_FAILED')
  t.notMatch(res.body, /not-the-(key|token)/)
})

test('a hub body over the size limit is cut off as UPSTREAM_BAD_RESPONSE', async (t) => {
  const { app } = await build(t, { env: { UPSTREAM_MAX_RESPONSE_BYTES: '4096' } })
  const res = await app.inject({
    url: `/v1/sp2/documents?npwp=${F.benchmark.twenty.npwp}&blNo=` +
      `${F.benchmark.twenty.blNo}&blDate=${F.benchmark.twenty.blDate}`
  })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_BAD_RESPONSE')
})

test('a failed hub call is logged with its outcome and request id', async (t) => {
  const { app, logs } = await build(t)
  const res = await app.inject({
    url: '/v1/customs/bc261/containers?blNo=SBX-500',
    headers: { 'x-request-id': 'trace-500' }
  })
  t.equal(res.statusCode, 502)
  const line = logs.find(l => l.msg === 'upstream call failed')
  t.equal(line?.outcome, 'unavailable')
  t.equal(line?.requestId, 'trace-500')
})
