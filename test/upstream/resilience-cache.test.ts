import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'tap'
import {
  createMemoryLookupStore, ENTRY_OVERHEAD_BYTES, keyBytes
} from '../../src/state/memory/lookup-cache.ts'
import { createLookupCache, withRetryAfter } from '../../src/upstream/policies/cache.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { gatewayError } from '../../src/errors.ts'
import { build, manualClock } from '../helpers/helper.ts'

const BL = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`

test('100 concurrent identical lookups reach the hub once', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '0' },
    sandbox: { latencyMs: 200 }
  })
  const answers = await Promise.all(Array.from({ length: 100 }, () => app.inject({ url: BL })))
  t.ok(answers.every(res => res.statusCode === 200), 'all answered 200')
  t.equal(sandbox.count('noblbc20'), 1, 'one hub call')
  t.same(new Set(answers.map(res => res.json().meta.count)), new Set([F.taxpayer.bc20.length]))
})

test('a cached lookup is answered from the cache, marked, with cache-control and ' +
  'age', async (t) => {
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
  const printed = await app.inject({
    url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp.slice(0, 2)}.` +
      `${F.taxpayer.npwp.slice(2)}`
  })
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
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '60' },
    sandbox: { latencyMs: 150 }
  })
  const [plain, fresh] = await Promise.all([
    app.inject({ url: BL }),
    new Promise((resolve) => setTimeout(resolve, 30)).then(() =>
      app.inject({ url: BL, headers: { 'cache-control': 'no-cache' } })
    )
  ])
  t.equal(plain.statusCode, 200)
  t.equal(fresh.statusCode, 200)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('entries expire after their TTL; an operation\'s profile cacheTtlSeconds wins', async (t) => {
  const profile = { operations: { noblbc20: { cacheTtlSeconds: 1 } } }
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' }, profile })
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
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '60' }
  })
  const good = await app.inject({ url: BL })
  await new Promise(resolve => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  const stale = await app.inject({ url: BL })
  t.equal(stale.statusCode, 200)
  t.same(stale.json().meta, { count: F.taxpayer.bc20.length, cached: true, stale: true })
  t.same(stale.json().data, good.json().data)
  t.equal(stale.headers['cache-control'], 'private, max-age=0, must-revalidate')
  // A lookup never answered before has nothing stale to fall back on.
  const other = await app.inject({
    url: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}`
  })
  t.equal(other.statusCode, 503)
  t.equal(other.json().code, 'UPSTREAM_UNAVAILABLE')
  // The hub refusing the request is not a failure to hide.
  sandbox.fault = '404'
  t.equal((await app.inject({ url: BL })).statusCode, 404)
})

test('the envelope around a cached answer: hits send the same bytes, stale and fresh their own ' +
  'meta', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '60' }
  })
  const dataOf = (payload: string) =>
    payload.slice('{"data":'.length, payload.lastIndexOf(',"meta":'))
  const fresh = await app.inject({ url: BL })
  const hit = await app.inject({ url: BL })
  const again = await app.inject({ url: BL })
  t.equal(
    fresh.payload.slice(fresh.payload.lastIndexOf(',"meta":')),
    `,"meta":{"count":${F.taxpayer.bc20.length},"cached":false}}`
  )
  t.equal(
    hit.payload.slice(hit.payload.lastIndexOf(',"meta":')),
    `,"meta":{"count":${F.taxpayer.bc20.length},"cached":true}}`
  )
  t.equal(again.payload, hit.payload, 'every hit: the same bytes')
  t.equal(dataOf(hit.payload), dataOf(fresh.payload), 'the same answer inside')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  const stale = await app.inject({ url: BL })
  t.same(stale.json().meta, { count: F.taxpayer.bc20.length, cached: true, stale: true })
  t.equal(dataOf(stale.payload), dataOf(fresh.payload))
  sandbox.fault = undefined
  const refreshed = await app.inject({ url: BL })
  t.same(refreshed.json().meta, { count: F.taxpayer.bc20.length, cached: false })
  t.same(refreshed.json().data, fresh.json().data)
  t.equal(
    (await app.inject({ url: BL })).payload,
    hit.payload,
    'hits on the refreshed entry: the same bytes as before'
  )
})

test('stale-if-error can be turned off', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '0' }
  })
  await app.inject({ url: BL })
  await new Promise(resolve => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  t.equal((await app.inject({ url: BL })).statusCode, 503)
})

test('writes are never cached', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const payload = { booked: true }
  const first = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload
  })
  const second = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload
  })
  t.equal(first.headers['cache-control'], 'no-store')
  t.equal(second.statusCode, 200)
  t.equal(sandbox.count('DetilBooking/isBooked'), 2)
})

const UNKNOWN = (i: number) =>
  `/v1/customs/bc20/bills-of-lading?npwp=${String(100_000_000_000_000 + i)}`

test('CACHE_MAX_BYTES bounds the number of lookups too, least recently used first', async (t) => {
  const budget = 40_000
  const env = { CACHE_TTL_SECONDS: '60', CACHE_MAX_BYTES: String(budget) }
  const { app, sandbox } = await build(t, { env })
  t.equal((await app.inject({ url: UNKNOWN(0) })).statusCode, 200)
  const each = app.hub.cacheUsage().bytes
  t.ok(each >= ENTRY_OVERHEAD_BYTES, `an empty answer charged ${each} bytes`)
  for (let i = 1; i < 80; i++) t.equal((await app.inject({ url: UNKNOWN(i) })).statusCode, 200)
  t.equal(app.hub.cacheUsage().entries, Math.floor(budget / each), 'as many as the budget pays for')
  t.ok(app.hub.cacheUsage().entries < 80)
  t.equal((await app.inject({ url: UNKNOWN(79) })).json().meta.cached, true, 'the newest are kept')
  t.equal((await app.inject({ url: UNKNOWN(0) })).json().meta.cached, false, 'the oldest went')
  t.equal(sandbox.count('noblbc20'), 81)

  // The store's own ceiling on entries, whatever the budget (a fixed one in the gateway).
  const store = createLookupCache<string>({
    store: createMemoryLookupStore<string>({ maxBytes: 1_000_000_000, maxEntries: 50 }),
    failureMs: 0,
    remember: () => false
  })
  t.teardown(() => store.close())
  const options = { ttlMs: 60_000, staleMs: 0, refresh: false, serveStaleOn: () => false }
  for (let i = 0; i < 80; i++) {
    await store.load(`key ${i}`, options, async () => ({ value: 'x', bytes: 1 }))
  }
  t.equal(store.size, 50)
})

test('an entry is charged its answer, its key and its bookkeeping', async (t) => {
  const store = createMemoryLookupStore<string>({ maxBytes: 10_000, maxEntries: 100 })
  const cache = createLookupCache({ store, failureMs: 0, remember: () => false })
  t.teardown(() => cache.close())
  const options = { ttlMs: 60_000, staleMs: 0, refresh: false, serveStaleOn: () => false }
  await cache.load('a key', options, async () => ({ value: 'x', bytes: 100 }))
  t.equal(cache.bytes, 100 + keyBytes('a key') + ENTRY_OVERHEAD_BYTES)
  t.equal(keyBytes('a key'), 10, 'two bytes a character')
  // A budget of 10,000 holds as many entries as their full cost allows, not their answers alone.
  for (let i = 0; i < 100; i++) {
    await cache.load('key ' +
    `${i}`, options, async () => ({ value: 'x', bytes: 100 }))
  }
  t.equal(cache.size, Math.floor(10_000 / (100 + keyBytes('key 10') + ENTRY_OVERHEAD_BYTES)))
})

test('expired entries and remembered failures are swept out without being asked for ' +
  'again', async (t) => {
  const budget = { maxBytes: 1_000_000, maxEntries: 100 }
  const store = createMemoryLookupStore<string>({ ...budget, sweepMs: 20 })
  const cache = createLookupCache({ store, failureMs: 60, remember: () => true, sweepMs: 20 })
  t.teardown(() => cache.close())
  for (let i = 0; i < 10; i++) {
    await cache.load(
      `k${i}`,
      { ttlMs: 40, staleMs: 0, refresh: false, serveStaleOn: () => false },
      async () => ({ value: 'x', bytes: 10 })
    )
  }
  await cache
    .load(
      'failing',
      { ttlMs: 40, staleMs: 0, refresh: false, serveStaleOn: () => false },
      async () => {
        throw new Error('hub down')
      }
    )
    .catch(() => {})
  t.equal(cache.size, 10)
  t.equal(cache.failures, 1)
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(cache.size, 0, 'entries past their time are gone')
  t.equal(cache.bytes, 0)
  t.equal(cache.failures, 0, 'so are failures')
})

test('a lookup the hub just failed answers that failure again for CACHE_FAILURE_SECONDS, even to ' +
  'no-cache, without a hub call', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '60', CACHE_FAILURE_SECONDS: '1' }
  })
  const failing = '/v1/customs/bc261/containers?blNo=SBX-503'
  for (const headers of [{}, {}, { 'cache-control': 'no-cache' }, { pragma: 'no-cache' }]) {
    const res = await app.inject({ url: failing, headers })
    t.equal(res.statusCode, 503)
    t.equal(res.json().code, 'UPSTREAM_UNAVAILABLE')
  }
  t.equal(sandbox.count('kontainerbc261'), 1, 'one hub call for four requests')
  t.equal(app.hub.cacheUsage().failures, 1)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await app.inject({ url: failing })).statusCode, 503)
  t.equal(sandbox.count('kontainerbc261'), 2, 'asked again once the second passed')
  // The hub refusing the request is not remembered: each asks the hub.
  for (let i = 0; i < 2; i++) {
    t.equal(
      (await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-404' })).statusCode,
      404
    )
  }
  t.equal(sandbox.count('kontainerbc261'), 4)
})

test('a remembered failure says when the gateway asks the hub again: retry-after on the failing ' +
  'answer and on each one from memory', async (t) => {
  const clock = manualClock()
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '60', CACHE_FAILURE_SECONDS: '5' },
    clock: clock.now
  })
  const failing = '/v1/customs/bc261/containers?blNo=SBX-503'
  const answers: Array<[number, string | undefined]> = []
  const ask = async () => {
    const res = await app.inject({ url: failing })
    answers.push([res.statusCode, res.headers['retry-after'] as string | undefined])
  }
  await ask()
  clock.advance(1200)
  await ask()
  clock.advance(2500)
  await ask()
  clock.advance(1000)
  await ask()
  t.equal(sandbox.count('kontainerbc261'), 1, 'one hub call: the rest from memory')
  clock.advance(400)
  await ask()
  t.equal(sandbox.count('kontainerbc261'), 2, 'past the 5 s, the hub is asked again')
  t.same(
    answers,
    [
      [503, '5'],
      [503, '4'],
      [503, '2'],
      [503, '1'],
      [503, '5']
    ],
    'the seconds until the hub is asked again (5, then what is left of it, rounded up)'
  )

  // The hub's own retry-after (a 429, passed on as 503) is kept while it is the longer.
  const limited = '/v1/customs/bc261/containers?blNo=SBX-429'
  const first = await app.inject({ url: limited })
  t.same([first.statusCode, first.headers['retry-after']], [503, '7'], 'the hub asked for 7 s')
  clock.advance(3000)
  const again = await app.inject({ url: limited })
  t.same(
    [again.statusCode, again.headers['retry-after']],
    [503, '4'],
    "what is left of the hub's 7 s, longer than the 2 s of memory left"
  )
  t.equal(sandbox.count('kontainerbc261'), 3)
})

test('withRetryAfter: a copy of a gateway error with the seconds, never less than 1; other ' +
  'errors as they are', async (t) => {
  const plain = new Error('not ours')
  t.equal(withRetryAfter(plain, 5000, 0), plain)
  const copy = withRetryAfter(
    gatewayError('UPSTREAM_TIMEOUT', { upstreamStatus: 504, upstreamMessage: 'slow' }),
    10,
    0
  ) as ReturnType<typeof gatewayError>
  t.match(copy, {
    code: 'UPSTREAM_TIMEOUT',
    statusCode: 504,
    retryAfter: '1',
    upstreamStatus: 504,
    upstreamMessage: 'slow',
    message: 'The customs hub did not answer in time'
  })
})

test('a remembered failure still serves the stale answer', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '1', CACHE_STALE_IF_ERROR_SECONDS: '60', CACHE_FAILURE_SECONDS: '5' }
  })
  t.equal((await app.inject({ url: BL })).statusCode, 200)
  await new Promise(resolve => setTimeout(resolve, 1100))
  sandbox.fault = '503'
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ url: BL })
    t.equal(res.statusCode, 200)
    t.equal(res.json().meta.stale, true)
  }
  t.equal(sandbox.count('noblbc20'), 2, 'the good answer, then one failing call')
})

test('callers asking afresh at once share one fresh hub call', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '60' },
    sandbox: { latencyMs: 150 }
  })
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      app.inject({ url: BL, headers: { 'cache-control': 'no-cache' } })
    )
  )
  t.same(new Set(answers.map(res => res.statusCode)), new Set([200]))
  t.equal(sandbox.count('noblbc20'), 1, 'one hub call for twenty no-cache requests')
  // A plain lookup joins a fresh call in flight; a fresh one still does not join a plain one
  // (above).
  const other = `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}`
  const [fresh, plain] = await Promise.all([
    app.inject({ url: other, headers: { 'cache-control': 'no-cache' } }),
    sleep(30).then(() => app.inject({ url: other }))
  ])
  t.equal(fresh.statusCode, 200)
  t.equal(plain.statusCode, 200)
  t.equal(sandbox.count('noblbc23'), 1, 'the plain lookup joined the fresh call')
})
