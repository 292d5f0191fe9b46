import { createServer } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { FastifyInstance } from 'fastify'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { retryDelay } from '../../src/upstream/policies/retry.ts'
import { build } from '../helpers/helper.ts'

const BL = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
const CONTAINERS = (blNo: string) => `/v1/customs/bc261/containers?blNo=${blNo}`
const OFFER = { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
const RESILIENT = { CACHE_TTL_SECONDS: '0', CACHE_STALE_IF_ERROR_SECONDS: '0' }
/** Retries on, with short delays (the hub profile's retries). */
const RETRIES = { count: 2, baseMs: 20, maxMs: 200 }

async function timed<T> (fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now()
  const result = await fn()
  return [result, Math.round(performance.now() - started)]
}

test('the failure matrix: what the caller gets, and how long it took', async (t) => {
  // The timeouts that should answer are 500 ms, the deadline that should not 20 s, and a slow
  // hub's answer 60 s away: "within" tells them apart however busy the machine.
  const { app, sandbox } = await build(t, {
    env: { ...RESILIENT, UPSTREAM_DEADLINE_MS: '20000' },
    profile: { retries: RETRIES, defaults: { timeouts: { headersMs: 500, bodyMs: 500 } } },
    sandbox: { slowMs: 60_000 }
  })
  const rows: Array<{
    fault: string
    status: number
    code: string
    calls: number
    within: number
  }> = [
    { fault: 'HANG', status: 504, code: 'UPSTREAM_TIMEOUT', calls: 1, within: 10_000 },
    { fault: 'SLOW', status: 504, code: 'UPSTREAM_TIMEOUT', calls: 1, within: 10_000 },
    { fault: '503', status: 503, code: 'UPSTREAM_UNAVAILABLE', calls: 3, within: 10_000 },
    { fault: '502', status: 502, code: 'UPSTREAM_UNAVAILABLE', calls: 3, within: 10_000 },
    { fault: '504', status: 502, code: 'UPSTREAM_UNAVAILABLE', calls: 3, within: 10_000 },
    { fault: 'RESET', status: 502, code: 'UPSTREAM_UNAVAILABLE', calls: 3, within: 10_000 },
    { fault: '500', status: 502, code: 'UPSTREAM_UNAVAILABLE', calls: 1, within: 10_000 },
    { fault: '429', status: 503, code: 'UPSTREAM_UNAVAILABLE', calls: 1, within: 10_000 },
    { fault: '401', status: 502, code: 'UPSTREAM_AUTH_FAILED', calls: 1, within: 10_000 },
    { fault: '404', status: 404, code: 'UPSTREAM_NOT_FOUND', calls: 1, within: 10_000 },
    { fault: 'MALFORMED', status: 502, code: 'UPSTREAM_BAD_RESPONSE', calls: 1, within: 10_000 },
    { fault: 'TRUNCATED', status: 502, code: 'UPSTREAM_BAD_RESPONSE', calls: 1, within: 10_000 }
  ]
  for (const row of rows) {
    sandbox.reset()
    const [res, ms] = await timed(() => app.inject({ url: CONTAINERS(`SBX-${row.fault}`) }))
    t.equal(
      res.statusCode,
      row.status,
      `${row.fault}: ${row.status} ${row.code} in ${ms} ms, ${sandbox.count('kontainerbc261')} ` +
      'hub call(s)'
    )
    t.equal(res.json().code, row.code)
    t.equal(sandbox.count('kontainerbc261'), row.calls, `${row.fault}: hub calls`)
    t.ok(ms < row.within, `${row.fault}: answered within ${row.within} ms`)
  }
})

test('a hub slower than the deadline gets UPSTREAM_TIMEOUT at the deadline', async (t) => {
  // Not before the deadline (700 ms), and long before the hub's answer (60 s) or the headers
  // timeout (also 60 s).
  const { app } = await build(t, {
    env: { ...RESILIENT, UPSTREAM_DEADLINE_MS: '700' },
    profile: { retries: RETRIES, defaults: { timeouts: { headersMs: 60000 } } },
    sandbox: { slowMs: 60_000 }
  })
  const [res, ms] = await timed(() => app.inject({ url: CONTAINERS('SBX-SLOW') }))
  t.equal(res.statusCode, 504)
  t.equal(res.json().code, 'UPSTREAM_TIMEOUT')
  t.ok(ms >= 650 && ms < 30_000, `took ${ms} ms`)
})

test('GETs are retried, each retry logged with the request id; POSTs never', async (t) => {
  const { app, sandbox, logs } = await build(t, { env: RESILIENT, profile: { retries: RETRIES } })
  const get = await app.inject({
    url: CONTAINERS('SBX-503'),
    headers: { 'x-request-id': 'retry-me' }
  })
  t.equal(get.statusCode, 503)
  t.equal(sandbox.count('kontainerbc261'), 3, 'one call and two retries')
  const retries = logs.filter(l => l.msg === 'retrying hub call')
  t.equal(retries.length, 2)
  t.ok(retries.every(l => l.requestId === 'retry-me' && l.upstreamStatus === 503))

  const post = await app.inject({
    method: 'POST',
    url: '/v1/bookings/SBX-503/offers',
    payload: OFFER
  })
  t.equal(post.statusCode, 503)
  t.equal(sandbox.count('DetilBooking'), 1, 'the offer was posted once')
  const booked = await app.inject({
    method: 'POST',
    url: '/v1/bookings/SBX-RESET/booked',
    payload: { booked: true }
  })
  t.equal(booked.statusCode, 502)
  t.equal(sandbox.count('DetilBooking/isBooked'), 1)
})

test('a refused connection is retried, then UPSTREAM_UNAVAILABLE', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
  const { app, logs } = await build(t, {
    env: {
      ...RESILIENT,
      UPSTREAM_HUB_URL: `http://127.0.0.1:${port}`,
      UPSTREAM_BASE_URL: `http://127.0.0.1:${port}`
    },
    profile: { retries: RETRIES }
  })
  const res = await app.inject({ url: BL })
  t.equal(res.statusCode, 502)
  t.equal(logs.filter(l => l.msg === 'retrying hub call').length, 2)
})

test('retry delays: exponential with jitter, capped, honouring retry-after within the ' +
  'cap', async (t) => {
  const policy = { retries: 3, baseMs: 100, maxMs: 1000 }
  t.equal(
    retryDelay(policy, 0, {}, () => 1),
    100
  )
  t.equal(
    retryDelay(policy, 2, {}, () => 1),
    400
  )
  t.equal(
    retryDelay(policy, 6, {}, () => 1),
    1000,
    'capped'
  )
  t.equal(
    retryDelay(policy, 0, {}, () => 0),
    0,
    'full jitter'
  )
  t.equal(
    retryDelay(policy, 0, { retryAfter: '1' }, () => 0.5),
    1000,
    'waits what the hub asks'
  )
  t.equal(
    retryDelay(policy, 0, { retryAfter: '7' }, () => 0.5),
    undefined,
    'a longer wait than allowed is not retried'
  )
})

const circuitOf = async (
  app: Awaited<ReturnType<typeof build>>['app'],
  upstream: 'hub' | 'base',
  operation: string
): Promise<string> =>
  (await app.inject({ url: '/health/ready' })).json().data.upstreams[upstream][operation]

test('the circuit of an operation opens after repeated failures, answers fast while open, and ' +
  'closes after a probe', async (t) => {
  const { app, sandbox } = await build(t, {
    env: RESILIENT,
    profile: {
      retries: { count: 0 },
      breaker: { volumeThreshold: 3, errorPercentage: 50, resetMs: 800 }
    }
  })
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ url: CONTAINERS('SBX-500') })).statusCode, 502)
  }
  t.equal(await circuitOf(app, 'hub', 'kontainerbc261'), 'open')
  t.equal(
    await circuitOf(app, 'hub', 'noblbc20'),
    'closed',
    "the other operations' circuits stay closed"
  )
  t.equal(await circuitOf(app, 'base', 'DetilBooking/isBooked'), 'closed')

  sandbox.reset()
  const [open, ms] = await timed(() => app.inject({ url: CONTAINERS('HEALTHY1') }))
  t.equal(open.statusCode, 503, `open circuit answered in ${ms} ms`)
  t.equal(open.json().code, 'UPSTREAM_UNAVAILABLE')
  t.match(open.headers['retry-after'], /^[1-9]\d*$/)
  t.equal(sandbox.count(), 0, 'the hub was not called')
  t.equal(
    (await app.inject({ url: BL })).statusCode,
    200,
    'another operation is answered meanwhile'
  )

  await new Promise((resolve) => setTimeout(resolve, 900))
  const probe = await app.inject({ url: CONTAINERS('HEALTHY1') })
  t.equal(probe.statusCode, 200, 'the half-open probe went through')
  t.equal(await circuitOf(app, 'hub', 'kontainerbc261'), 'closed')
  t.equal((await app.inject({ url: CONTAINERS('HEALTHY2') })).statusCode, 200)
})

test('a retried call counts once toward the circuit', async (t) => {
  // Three calls of three attempts each: nine failed attempts, three failed calls.
  const profile = { retries: RETRIES, breaker: { volumeThreshold: 4, errorPercentage: 50 } }
  const { app, sandbox } = await build(t, { env: RESILIENT, profile })
  for (let i = 0; i < 3; i++) {
    t.equal((await app.inject({ url: CONTAINERS('SBX-503') })).statusCode, 503)
  }
  t.equal(sandbox.count('kontainerbc261'), 9, 'each call was retried twice')
  t.equal(
    await circuitOf(app, 'hub', 'kontainerbc261'),
    'closed',
    'three calls are under the volume of four'
  )
  t.equal((await app.inject({ url: CONTAINERS('SBX-503') })).statusCode, 503)
  t.equal(await circuitOf(app, 'hub', 'kontainerbc261'), 'open', 'the fourth failed call opens it')
})

test('an answer the gateway cannot read does not open the circuit: the hub is up', async (t) => {
  const profile = { retries: RETRIES, breaker: { volumeThreshold: 3 } }
  const { app } = await build(t, { env: RESILIENT, profile })
  for (const fault of ['MALFORMED', 'TRUNCATED', 'SHAPE', 'MALFORMED', 'HTML', 'NOKEY']) {
    t.equal(
      (await app.inject({ url: CONTAINERS(`SBX-${fault}`) })).json().code,
      'UPSTREAM_BAD_RESPONSE',
      fault
    )
  }
  t.equal(await circuitOf(app, 'hub', 'kontainerbc261'), 'closed')
})

test("a read client hammering a failing lookup cannot make another client's write, or a healthy " +
  'lookup, fail', async (t) => {
  const reader = { authorization: 'Bearer key-reader' }
  const writer = { authorization: 'Bearer key-writer' }
  // The defaults, but for short timers: the breaker, retries, failures remembered.
  const { app, sandbox } = await build(t, {
    clients: [
      { name: 'reader', key: 'key-reader', scopes: ['customs:read'] },
      { name: 'writer', key: 'key-writer', scopes: ['customs:read', 'bookings:write'] }
    ],
    profile: {
      retries: { count: 2, baseMs: 10 },
      breaker: { volumeThreshold: 5, errorPercentage: 50 }
    },
    env: {
      CACHE_TTL_SECONDS: '30',
      CACHE_STALE_IF_ERROR_SECONDS: '300',
      CACHE_FAILURE_SECONDS: '5'
    }
  })
  // 60 requests for lookups the hub fails (one retried on 503, one a plain 500), half of them with
  // no-cache, 20 at a time.
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.inject({
          url: CONTAINERS(i % 2 === 0 ? 'SBX-503' : 'SBX-500'),
          headers: { ...reader, ...(i % 4 < 2 ? { 'cache-control': 'no-cache' } : {}) }
        })
      )
    )
    t.same(
      [...new Set(answers.map((res) => `${res.statusCode} ${String(res.json().code)}`))].sort(),
      ['502 UPSTREAM_UNAVAILABLE', '503 UPSTREAM_UNAVAILABLE'],
      `round ${round + 1}: the reader gets its failures`
    )
  }
  t.ok(
    sandbox.count('kontainerbc261') <= 4,
    `${sandbox.count('kontainerbc261')} hub calls for 60 requests: each failing lookup asked ` +
    'once, then remembered'
  )
  t.equal(await circuitOf(app, 'hub', 'kontainerbc261'), 'closed')

  const write = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true },
    headers: writer
  })
  t.equal(write.statusCode, 200, "the other client's write goes through")
  t.equal(
    (await app.inject({ url: CONTAINERS('HEALTHY1'), headers: writer })).statusCode,
    200,
    'a healthy lookup of the same operation too'
  )
  t.equal((await app.inject({ url: BL, headers: writer })).statusCode, 200, 'and of another')
})

test('one client may have UPSTREAM_MAX_CALLS_PER_CLIENT hub calls in flight; the next is 429, ' +
  'others are not held up', async (t) => {
  const { app, sandbox } = await build(t, {
    clients: [
      { name: 'greedy', key: 'key-greedy', scopes: ['customs:read'] },
      { name: 'other', key: 'key-other', scopes: ['customs:read'] }
    ],
    env: { UPSTREAM_MAX_CALLS_PER_CLIENT: '4', CACHE_TTL_SECONDS: '30' },
    sandbox: { latencyMs: 300 }
  })
  const greedy = { authorization: 'Bearer key-greedy' }
  const slow = Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      app.inject({ url: CONTAINERS(`SLOWBL${i}`), headers: greedy })
    )
  )
  await new Promise((resolve) => setTimeout(resolve, 50))
  const other = await app.inject({
    url: CONTAINERS('OTHERBL'),
    headers: { authorization: 'Bearer key-other' }
  })
  t.equal(other.statusCode, 200, 'another client is not counted with it')
  const answers = await slow
  t.same(answers.map((res) => res.statusCode).sort(), [200, 200, 200, 200, 429, 429])
  const refused = answers.find((res) => res.statusCode === 429)!
  t.equal(refused.json().code, 'RATE_LIMITED')
  t.equal(refused.headers['retry-after'], '1')
  t.equal(sandbox.count('kontainerbc261'), 5, 'the refused calls never reached the hub')
  // Once they are answered, the places are free again; a cached answer needs none.
  t.same(
    (
      await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          app.inject({ url: CONTAINERS(`SLOWBL${i}`), headers: greedy })
        )
      )
    ).map((res) => res.statusCode),
    [200, 200, 200, 200]
  )
})

test('the circuit keeps counts, not every call\'s latency, and takes no snapshots', async (t) => {
  // With opossum's defaults each failure sorted every latency of the window (3.7 ms with 25,000
  // calls in it).
  const { opossumOptions } = await import('../../src/upstream/policies/breaker.ts')
  const { default: CircuitBreaker } = await import('opossum')
  const breaker = new CircuitBreaker(
    async (fail: boolean) => {
      if (fail) throw Object.assign(new Error('hub down'), { code: 'UPSTREAM_UNAVAILABLE' })
    },
    opossumOptions('test', {
      errorThresholdPercentage: 50,
      volumeThreshold: 5,
      rollingCountTimeout: 1000,
      resetTimeout: 1000
    })
  )
  t.teardown(() => breaker.shutdown())
  let snapshots = 0
  breaker.status.on('snapshot', () => { snapshots++ })
  for (let i = 0; i < 100; i++) await breaker.fire(false)
  await breaker.fire(true).catch(() => {})
  const { fires, failures, successes, latencyTimes } = breaker.stats
  t.same(
    { fires, failures, successes },
    { fires: 101, failures: 1, successes: 100 },
    'the counts the circuit decides on'
  )
  t.equal(latencyTimes.length, 0, 'no latency kept per call')
  t.notOk(breaker.opened, 'one failure in 101 leaves it closed')
  // A bucket is 100 ms here; snapshots would come once a bucket.
  await new Promise(resolve => setTimeout(resolve, 350))
  t.equal(snapshots, 0, 'no snapshot computed')
})

test('the hub refusing requests (4xx) does not open the circuit', async (t) => {
  const profile = { retries: RETRIES, breaker: { volumeThreshold: 3 } }
  const { app } = await build(t, { env: RESILIENT, profile })
  for (let i = 0; i < 6; i++) {
    t.equal((await app.inject({ url: CONTAINERS('SBX-404') })).statusCode, 404)
  }
  t.equal(await circuitOf(app, 'hub', 'kontainerbc261'), 'closed')
})

test('a hub body over the limit is cut off and memory stays flat', async (t) => {
  // The sandbox shares this process and writes 1.4 MB per answer: only what
  // survives a full collection is retained memory.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const env = { ...RESILIENT, UPSTREAM_MAX_RESPONSE_BYTES: '65536' }
  const { app } = await build(t, { env, profile: { retries: RETRIES } })
  const url = `/v1/sp2/documents?npwp=${F.benchmark.fiveHundred.npwp}&blNo=` +
    `${F.benchmark.fiveHundred.blNo}&blDate=${F.benchmark.fiveHundred.blDate}`
  await app.inject({ url })
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < 40; i++) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 502)
    t.equal(res.json().code, 'UPSTREAM_BAD_RESPONSE')
  }
  gc()
  const grown = (process.memoryUsage().heapUsed - before) / 1024 / 1024
  // 40 whole bodies of ~1.4 MB, kept, would be over 50 MB.
  t.ok(grown < 10, `retained heap grew ${grown.toFixed(1)} MB over 40 oversized answers`)
})

/** Holds the event loop, as a long synchronous task or collection does. */
function blockLoop (ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) { /* busy */ }
}

/** Resolves just after the load-shedding sampler has read (and reset) its window. */
async function sampled (app: FastifyInstance): Promise<void> {
  const { heapUsed, rssBytes } = app.memoryUsage()
  for (;;) {
    await new Promise(resolve => setImmediate(resolve))
    const now = app.memoryUsage()
    if (now.heapUsed !== heapUsed || now.rssBytes !== rssBytes) return
  }
}

test('a single pause shorter than PRESSURE_MAX_EVENT_LOOP_DELAY_MS sheds nothing', async (t) => {
  // A pause of 300 ms (a start-up's compilation, a long collection) under a
  // threshold of 500. It once read as "no sample in the window: Infinity", and
  // shed the next requests, whenever it began right after the sampler's reading
  // and outlasted its 100 ms window; each round below begins it there.
  const { app, sandbox } = await build(t, { env: { PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '500' } })
  const statuses: number[] = []
  // The start-up's own delays (compiling the routes) belong to the sampler's first windows, not to
  // the pause measured.
  await sampled(app)
  await sampled(app)
  for (let round = 0; round < 6; round++) {
    await sampled(app)
    blockLoop(300)
    await new Promise(resolve => setTimeout(resolve, 2)) // the samplers' timers run first
    statuses.push((await app.inject({ url: BL })).statusCode)
  }
  t.same(statuses, Array(6).fill(200), 'every lookup right after a pause answered')
  t.equal(sandbox.count(), 6)
})

test('a start-up that held the loop past PRESSURE_MAX_EVENT_LOOP_DELAY_MS does not shed the ' +
  'first requests', async (t) => {
  // A gateway just started on a busy machine: its last stretch of loading
  // outlasts a whole sampling window, so the sampler reads Infinity; the
  // first requests come right after. Without the start-up grace they were
  // answered 503 OVERLOADED.
  // A window of 500 ms, and a grace of two: the stretch outlasts one window but not the grace.
  const { app, sandbox } = await build(t, { env: { PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '500' } })
  blockLoop(700)
  await new Promise((resolve) => setTimeout(resolve, 2)) // the samplers' timers run first
  const statuses = [
    (await app.inject({ url: BL })).statusCode,
    (await app.inject({ url: BL })).statusCode
  ]
  t.same(statuses, [200, 200], 'the first lookups after the start-up answered')
  t.equal(sandbox.count(), 2)
})

test('a loop that stays behind for longer than PRESSURE_MAX_EVENT_LOOP_DELAY_MS sheds, and ' +
  'recovers when it catches up', async (t) => {
  const { app, sandbox } = await build(t, { env: { PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '200' } })
  // Sustained lag: the loop turns only every 300 ms, over several windows.
  const lag = setInterval(() => blockLoop(300), 0)
  t.teardown(() => clearInterval(lag))
  await new Promise((resolve) => setTimeout(resolve, 900))
  const shed = await app.inject({ url: BL })
  clearInterval(lag)
  t.equal(shed.statusCode, 503)
  t.equal(shed.json().code, 'OVERLOADED')
  t.equal(sandbox.count(), 0, 'nothing reached the hub')
  await new Promise((resolve) => setTimeout(resolve, 600)) // two windows of a free loop
  t.equal((await app.inject({ url: BL })).statusCode, 200, 'answers again once the loop keeps up')
})

test('load shedding answers 503 OVERLOADED with retry-after; liveness still answers', async (t) => {
  // A heap limit of one byte is always exceeded: the shedding path, deterministically.
  const env = { ...RESILIENT, PRESSURE_MAX_HEAP_USED_BYTES: '1' }
  const { app, sandbox } = await build(t, { env, profile: { retries: RETRIES } })
  await new Promise(resolve => setTimeout(resolve, 250)) // the sampler's first reading
  const shed = await app.inject({ url: BL })
  t.equal(shed.statusCode, 503)
  t.equal(shed.json().code, 'OVERLOADED')
  t.equal(shed.headers['retry-after'], '5')
  t.equal(sandbox.count(), 0, 'nothing reached the hub')
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200)
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 200)
})
