import { test } from 'tap'
import Fastify from 'fastify'
import { request } from 'undici'
import gateway, { serverOptions } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES as F,
  SANDBOX_PLATFORM_ID,
  startSandbox
} from '../../src/sandbox/index.ts'
import { OPERATIONS } from '../../src/catalogue/operations.ts'
import { build, RESILIENCE_OFF, testProfile } from '../helpers/helper.ts'

test('liveness and readiness answer in the envelope', async (t) => {
  const { app } = await build(t)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { data: { status: 'ok' }, meta: {} })
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  const closed = (service: string) =>
    Object.fromEntries(
      OPERATIONS.filter((op) => op.service === service).map((op) => [op.id, 'closed'])
    )
  const profile = { name: 'sandbox', source: 'built-in', digest: app.hub.profile.digest }
  const upstreams = { hub: closed('hub'), base: closed('base') }
  t.same(ready.json(), { data: { status: 'ready', upstreams, sandbox: true, profile }, meta: {} },
    'every operation\'s circuit, by upstream, and the hub profile in force (the sandbox\'s)')
  t.match(app.hub.profile.digest, /^[0-9a-f]{16}$/)
  t.equal(
    Object.keys(ready.json().data.upstreams.hub).length +
      Object.keys(ready.json().data.upstreams.base).length,
    OPERATIONS.length
  )
})

test('metrics count requests by route and status and hub calls by operation and ' +
  'outcome', async (t) => {
  const { app } = await build(t)
  await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-500' })
  await app.inject({ url: '/v1/customs/bc261/containers?blNo=bad value' })
  await app.inject({ url: '/unknown/path/1' })
  const res = await app.inject({ url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain/)
  const text = res.body
  t.match(
    text,
    /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc20\/bills-of-lading",status_code="200"\} 1/
  )
  t.match(
    text,
    /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc261\/containers",status_code="502"\} 1/
  )
  t.match(
    text,
    /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc261\/containers",status_code="400"\} 1/
  )
  t.match(text, /gateway_http_requests_total\{method="GET",route="unmatched",status_code="404"\} 1/)
  t.match(text, /gateway_upstream_requests_total\{operation="noblbc20",outcome="ok"\} 1/)
  t.match(
    text,
    /gateway_upstream_requests_total\{operation="kontainerbc261",outcome="unavailable"\} 1/
  )
  t.match(
    text,
    /gateway_upstream_request_duration_seconds_bucket\{le="[0-9.]+",operation="noblbc20",outcome="ok"\}/
  )
  t.match(text, /process_resident_memory_bytes/)
})

test('while closing, readiness and other routes answer SHUTTING_DOWN; connections close after ' +
  'their answer', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const config = resolveConfig({
    ...RESILIENCE_OFF,
    UPSTREAM_HUB_URL: sandbox.url,
    UPSTREAM_BASE_URL: sandbox.url,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: SANDBOX_PLATFORM_ID
  })
  const app = Fastify(serverOptions(config))
  await app.register(gateway, { config, sandbox: true, profile: testProfile() })
  // Registered after the gateway's own: it holds the app in its closing phase,
  // before the listener closes, so that new requests can still arrive.
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  app.addHook('preClose', () => held)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const base = `http://127.0.0.1:${port}`

  const closed = app.close()
  await new Promise((resolve) => setTimeout(resolve, 50))
  const ready = await request(`${base}/health/ready`)
  t.equal(ready.statusCode, 503)
  t.equal(((await ready.body.json()) as { code: string }).code, 'SHUTTING_DOWN')
  t.equal(ready.headers.connection, 'close')
  const refused = await request(`${base}/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`)
  t.equal(refused.statusCode, 503)
  t.equal(((await refused.body.json()) as { code: string }).code, 'SHUTTING_DOWN')
  t.equal(refused.headers['retry-after'], '1')
  const live = await request(`${base}/health/live`)
  t.equal(live.statusCode, 200, 'liveness: the process is still up')
  await live.body.dump()
  t.equal(sandbox.count(), 0, 'nothing reached the hub')
  release()
  await closed
})
