import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

const BL = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`

test('100 concurrent identical lookups reach the hub once', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '0' }, sandbox: { latencyMs: 200 } })
  const answers = await Promise.all(Array.from({ length: 100 }, () => app.inject({ url: BL })))
  t.ok(answers.every(res => res.statusCode === 200), 'all answered 200')
  t.equal(sandbox.count('noblbc20'), 1, 'one hub call')
  t.same(new Set(answers.map(res => res.json().meta.count)), new Set([F.taxpayer.bc20.length]))
})

test('a cached lookup is answered from the cache, marked, with cache-control and age', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const first = await app.inject({ url: BL })
  t.equal(first.json().meta.cached, false)
  t.equal(first.headers['cache-control'], 'private, max-age=60')
  const second = await app.inject({ url: BL })
  t.equal(second.json().meta.cached, true)
  t.same(second.json().data, first.json().data)
  t.match(second.headers['cache-control'], /^private, max-age=(59|60)$/)
  t.match(second.headers.age, /^\d+$/)
  t.equal(sandbox.count('noblbc20'), 1)

  // The printed NPWP is the same taxpayer: the same cache entry.
  const printed = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp.slice(0, 2)}.${F.taxpayer.npwp.slice(2)}` })
  t.equal(printed.json().meta.cached, true)
  t.equal(sandbox.count('noblbc20'), 1)
})

test('cache-control: no-cache asks the hub afresh and refreshes the entry', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  await app.inject({ url: BL })
  const fresh = await app.inject({ url: BL, headers: { 'cache-control': 'no-cache' } })
  t.equal(fresh.json().meta.cached, false)
  t.equal(sandbox.count('noblbc20'), 2)
  const after = await app.inject({ url: BL })
  t.equal(after.json().meta.cached, true)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('no-cache does not join a lookup already in flight: the hub is asked afresh', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' }, sandbox: { latencyMs: 150 } })
  const [plain, fresh] = await Promise.all([
    app.inject({ url: BL }),
    new Promise(resolve => setTimeout(resolve, 30)).then(() => app.inject({ url: BL, headers: { 'cache-control': 'no-cache' } }))
  ])
  t.equal(plain.statusCode, 200)
  t.equal(fresh.statusCode, 200)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('entries expire after their TTL; a per-operation TTL overrides the default', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60', UPSTREAM_OPERATIONS: JSON.stringify({ noblbc20: { cacheTtlSeconds: 1 } }) } })
  await app.inject({ url: BL })
  t.equal((await app.inject({ url: BL })).json().meta.cached, true)
  await new Promise(resolve => setTimeout(resolve, 1100))
  const expired = await app.inject({ url: BL })
  t.equal(expired.json().meta.cached, false)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('TTL 0 disables caching: every lookup asks the hub', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '0' } })
  await app.inject({ url: BL })
  const again = await app.inject({ url: BL })
  t.equal(again.json().meta.cached, false)
  t.equal(again.headers['cache-control'], 'no-store')
  t.equal(sandbox.count('noblbc20'), 2)
})

test('stale-if-error: a failing hub gets the last answer, marked stale', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '60' } })
  const good = await app.inject({ url: BL })
  await new Promise(resolve => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  const stale = await app.inject({ url: BL })
  t.equal(stale.statusCode, 200)
  t.same(stale.json().meta, { count: F.taxpayer.bc20.length, cached: true, stale: true })
  t.same(stale.json().data, good.json().data)
  t.equal(stale.headers['cache-control'], 'private, max-age=0, must-revalidate')
  // A lookup never answered before has nothing stale to fall back on.
  const other = await app.inject({ url: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  t.equal(other.statusCode, 503)
  t.equal(other.json().code, 'UPSTREAM_UNAVAILABLE')
  // The hub refusing the request is not a failure to hide.
  sandbox.fault = '404'
  t.equal((await app.inject({ url: BL })).statusCode, 404)
})

test('the envelope around a cached answer: hits send the same bytes, stale and fresh their own meta', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '60' } })
  const dataOf = (payload: string) => payload.slice('{"data":'.length, payload.lastIndexOf(',"meta":'))
  const fresh = await app.inject({ url: BL })
  const hit = await app.inject({ url: BL })
  const again = await app.inject({ url: BL })
  t.equal(fresh.payload.slice(fresh.payload.lastIndexOf(',"meta":')), `,"meta":{"count":${F.taxpayer.bc20.length},"cached":false}}`)
  t.equal(hit.payload.slice(hit.payload.lastIndexOf(',"meta":')), `,"meta":{"count":${F.taxpayer.bc20.length},"cached":true}}`)
  t.equal(again.payload, hit.payload, 'every hit: the same bytes')
  t.equal(dataOf(hit.payload), dataOf(fresh.payload), 'the same answer inside')
  await new Promise(resolve => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  const stale = await app.inject({ url: BL })
  t.same(stale.json().meta, { count: F.taxpayer.bc20.length, cached: true, stale: true })
  t.equal(dataOf(stale.payload), dataOf(fresh.payload))
  sandbox.fault = undefined
  const refreshed = await app.inject({ url: BL })
  t.same(refreshed.json().meta, { count: F.taxpayer.bc20.length, cached: false })
  t.same(refreshed.json().data, fresh.json().data)
  t.equal((await app.inject({ url: BL })).payload, hit.payload, 'hits on the refreshed entry: the same bytes as before')
})

test('stale-if-error can be turned off', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '0' } })
  await app.inject({ url: BL })
  await new Promise(resolve => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  t.equal((await app.inject({ url: BL })).statusCode, 503)
})

test('writes are never cached', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const payload = { booked: true }
  const first = await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload })
  const second = await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload })
  t.equal(first.headers['cache-control'], 'no-store')
  t.equal(second.statusCode, 200)
  t.equal(sandbox.count('DetilBooking/isBooked'), 2)
})
