import { test } from 'tap'
import { Client } from 'undici'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

test('liveness and readiness answer in the envelope', async (t) => {
  const { app } = await build(t)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { data: { status: 'ok' }, meta: {} })
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { data: { status: 'ready', sandbox: false }, meta: {} })
})

test('metrics count requests by route and status and hub calls by operation and outcome', async (t) => {
  const { app } = await build(t)
  await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-500' })
  await app.inject({ url: '/v1/customs/bc261/containers?blNo=bad value' })
  await app.inject({ url: '/unknown/path/1' })
  const res = await app.inject({ url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  const text = res.body
  t.match(text, /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc20\/bills-of-lading",status="200"\} 1/)
  t.match(text, /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc261\/containers",status="502"\} 1/)
  t.match(text, /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc261\/containers",status="400"\} 1/)
  t.match(text, /gateway_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/)
  t.match(text, /gateway_upstream_requests_total\{operation="noblbc20",outcome="ok"\} 1/)
  t.match(text, /gateway_upstream_requests_total\{operation="kontainerbc261",outcome="unavailable"\} 1/)
  t.match(text, /gateway_upstream_request_duration_seconds_bucket\{le="[0-9.]+",operation="noblbc20",outcome="ok"\}/)
  t.match(text, /process_resident_memory_bytes/)
})

test('while closing, readiness and other routes answer SHUTTING_DOWN, and the request in flight finishes', async (t) => {
  const { app } = await build(t, { sandbox: { slowMs: 400 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  // Pipelined behind a slow request: the second request on each connection is read while the app closes.
  const clients = [0, 1].map(() => new Client(`http://127.0.0.1:${port}`, { pipelining: 2 }))
  t.teardown(() => Promise.all(clients.map(c => c.destroy())))
  const slow = { method: 'GET' as const, path: '/v1/customs/bc261/containers?blNo=SBX-SLOW' }
  const inFlight = clients[0]!.request(slow)
  const inFlight2 = clients[1]!.request(slow)
  await new Promise(resolve => setTimeout(resolve, 100))
  const closed = app.close()
  const ready = clients[0]!.request({ method: 'GET', path: '/health/ready' })
  const refused = clients[1]!.request({ method: 'GET', path: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })

  await (await inFlight2).body.dump()
  const first = await inFlight
  t.equal(first.statusCode, 200, 'the request in flight finished')
  await first.body.dump()
  const readyRes = await ready
  t.equal(readyRes.statusCode, 503)
  t.equal(((await readyRes.body.json()) as { code: string }).code, 'SHUTTING_DOWN')
  const refusedRes = await refused
  t.equal(refusedRes.statusCode, 503)
  t.equal(((await refusedRes.body.json()) as { code: string }).code, 'SHUTTING_DOWN')
  t.equal(refusedRes.headers['retry-after'], '1')
  await closed
})
