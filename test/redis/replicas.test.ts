import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import { test } from 'tap'
import WebSocket from 'ws'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { SANDBOX_FIXTURES as F, sandboxEnv, startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.ts'
import { RESILIENCE_OFF, testProfile, writeClientsFile, type TestClient } from '../helper.ts'
import { connect, startRedisServer, until, type RedisServer } from './redis-server.ts'

// Two gateway replicas, each its own Fastify app listening on a loopback
// port, in front of one sandbox hub and one real redis-server: what a
// client behind a load balancer sees when its requests land on either.

type Test = Parameters<Parameters<typeof test>[0]>[0]

const WRITER: TestClient = { name: 'yard-app', key: 'key-yard', scopes: ['bookings:write', 'events:read', 'customs:read'], rateLimit: { max: 1000, timeWindow: '1 minute' } }
const READER: TestClient = { name: 'portal', key: 'key-portal', scopes: ['customs:read'], rateLimit: { max: 10, timeWindow: '1 minute' } }
const CLIENTS = [WRITER, READER]
const PREFIX = 'cgw-test:'

const OFFERS = `/v1/bookings/${F.bookingRequestId}/offers`
const BOOKED = `/v1/bookings/${F.bookingRequestId}/booked`
const LOOKUP = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
const offer = { serviceOrderId: 'SO-1', price: 1250000.5, offeredAt: '2024-03-01T08:15:00+07:00' }

interface Replica {
  name: string
  app: FastifyInstance
  base: string
  request (path: string, init?: { method?: string, key?: string, body?: unknown, headers?: Record<string, string>, cache?: RequestInit['cache'] }): Promise<Answer>
  socket (key?: string): Promise<Socket>
}

interface Answer { status: number, headers: Headers, text: string, json: Record<string, any> }
interface Socket { events: Array<Record<string, any>>, close (): void }

interface Replicas { a: Replica, b: Replica, sandbox: Sandbox, redis: RedisServer }

/**
 * A sandbox, a redis-server (or the one given) and two replicas of the
 * gateway on both, configured alike (`env` over the tests' defaults: one hub
 * call per request, authentication with CLIENTS).
 */
async function replicas (t: Test, options: { env?: Record<string, string>, sandbox?: SandboxOptions, redis?: RedisServer } = {}): Promise<Replicas> {
  const redis = options.redis ?? await startRedisServer(t)
  const sandbox = await startSandbox(options.sandbox ?? {})
  t.teardown(() => sandbox.close())
  const config = resolveConfig({
    ...sandboxEnv(sandbox.url),
    ...RESILIENCE_OFF,
    LOG_LEVEL: 'warn',
    CLIENTS_FILE: writeClientsFile(t, CLIENTS),
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: PREFIX,
    // Generous: on a loaded machine a command that times out counts locally (as it should), which would blur what is shared.
    REDIS_COMMAND_TIMEOUT_MS: '5000',
    ...options.env
  })
  const start = async (name: string): Promise<Replica> => {
    const profile = testProfile(options.sandbox)
    const app = await buildApp({ config, sandbox: true, profile }, false)
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    // Start-up gives Redis 3 s, then goes on without it: a loaded machine may need longer.
    if (await app.state.redis?.whenUp(60_000) !== true) throw new Error(`${name}: no Redis`)
    const { port } = app.server.address() as { port: number }
    const base = `127.0.0.1:${port}`
    return {
      name,
      app,
      base,
      async request (path, { method = 'GET', key = WRITER.key, body, headers = {}, cache } = {}) {
        const res = await fetch(`http://${base}${path}`, {
          method,
          ...(cache === undefined ? {} : { cache }),
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await res.text()
        let json: Record<string, any> = {}
        try { json = JSON.parse(text) } catch {}
        return { status: res.status, headers: res.headers, text, json }
      },
      async socket (key = WRITER.key) {
        const ws = new WebSocket(`ws://${base}/v1/events`, { headers: { authorization: `Bearer ${key}` } })
        const events: Array<Record<string, any>> = []
        ws.on('message', (message) => events.push(JSON.parse(String(message)) as Record<string, any>))
        await once(ws, 'open')
        t.teardown(() => ws.terminate())
        return { events, close: () => ws.terminate() }
      }
    }
  }
  const [a, b] = await Promise.all([start('A'), start('B')])
  return { a, b, sandbox, redis }
}

/** Readers of the event stream in Redis: both replicas are reading once two clients are blocked on it. */
async function bothSubscribed (t: Test, redis: RedisServer): Promise<void> {
  const probe = await connect(t, redis)
  await until(async () => /^blocked_clients:2\r?$/m.test(await probe.client.info('clients')), 10_000, 'both replicas reading the event stream')
  await probe.close()
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

async function ready (replica: Replica): Promise<Answer> {
  return replica.request('/health/ready')
}

async function redisUpGauge (replica: Replica): Promise<string | undefined> {
  const text = (await replica.request('/metrics')).text
  return /^gateway_redis_up (\d)$/m.exec(text)?.[1]
}

test('the same Idempotency-Key on replica A, then B: one hub call, and B replays A\'s answer byte for byte', async (t) => {
  const { a, b, sandbox } = await replicas(t)
  const first = await a.request(OFFERS, { method: 'POST', body: offer, headers: { 'idempotency-key': 'offer-ab' } })
  t.equal(first.status, 200)
  t.equal(first.headers.get('idempotent-replayed'), null)
  const again = await b.request(OFFERS, { method: 'POST', body: offer, headers: { 'idempotency-key': 'offer-ab' } })
  t.equal(again.status, 200)
  t.equal(again.headers.get('idempotent-replayed'), 'true', 'B answers from the store')
  t.equal(again.text, first.text, 'the same body, byte for byte')
  t.equal(again.headers.get('content-type'), first.headers.get('content-type'))
  t.equal(sandbox.count('DetilBooking'), 1, 'the hub was called once')

  const reused = await b.request(OFFERS, { method: 'POST', body: { ...offer, price: 1 }, headers: { 'idempotency-key': 'offer-ab' } })
  t.equal(reused.status, 422, 'another request with the key on the other replica')
  t.equal(reused.json.code, 'IDEMPOTENCY_KEY_REUSED')
  t.equal(sandbox.count('DetilBooking'), 1)
})

test('the same Idempotency-Key on A and B at once: one hub call, both answered with it', async (t) => {
  // The hub takes 300 ms, so that the second request arrives while the first is in flight.
  const { a, b, sandbox } = await replicas(t, { sandbox: { latencyMs: 300 } })
  const headers = { 'idempotency-key': 'offer-concurrent' }
  const answers = await Promise.all([
    a.request(OFFERS, { method: 'POST', body: offer, headers }),
    b.request(OFFERS, { method: 'POST', body: offer, headers })
  ])
  t.same(answers.map(r => r.status), [200, 200])
  t.equal(answers[0].text, answers[1].text, 'the same answer')
  t.same(answers.map(r => r.headers.get('idempotent-replayed')).sort(), ['true', null].sort(), 'one made the call, the other replayed it')
  t.equal(sandbox.count('DetilBooking'), 1, 'one hub call')
})

test('a client\'s limit of 10 a minute holds across A and B together', async (t) => {
  const { a, b, sandbox } = await replicas(t)
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) statuses.push((await (i % 2 === 0 ? a : b).request(LOOKUP, { key: READER.key })).status)
  t.same(statuses, [...Array(10).fill(200), 429, 429], 'ten answered in all, then refused on either replica')
  t.equal(sandbox.count('noblbc20'), 10)
  const refused = await b.request(LOOKUP, { key: READER.key })
  t.equal(refused.json.code, 'RATE_LIMITED')
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'with retry-after')
  t.equal(refused.headers.get('x-ratelimit-limit'), '10')
})

test('a booked POST on A reaches a socket on B once, and A\'s own socket once, with the same event id', async (t) => {
  const { a, b, redis } = await replicas(t)
  await bothSubscribed(t, redis)
  const [onA, onB] = [await a.socket(), await b.socket()]
  const res = await a.request(BOOKED, { method: 'POST', body: { booked: true, note: 'across replicas' }, headers: { 'x-request-id': 'booked-ab' } })
  t.equal(res.status, 200)
  await until(() => onB.events.length >= 1, 5000, 'the event on B')
  // Time for a duplicate to arrive, were there one.
  await sleep(300)
  t.equal(onB.events.length, 1, 'once on B')
  t.equal(onA.events.length, 1, 'once on A')
  t.match(onB.events[0], { type: 'booking.booked', requestId: 'booked-ab', data: { bookingRequestId: F.bookingRequestId, booked: true, note: 'across replicas' } })
  t.match(onB.events[0]?.id, /^\d+-\d+$/, 'a position in the event stream')
  t.equal(onA.events[0]?.id, onB.events[0]?.id, 'the same id on every replica')
  t.same(onA.events[0], onB.events[0])
})

test('a lookup warmed on A is a cache hit on B', async (t) => {
  const { a, b, sandbox } = await replicas(t, { env: { CACHE_TTL_SECONDS: '30' } })
  const warm = await a.request(LOOKUP)
  t.equal(warm.status, 200)
  t.equal(warm.json.meta.cached, false)
  await sleep(1100)
  const hit = await b.request(LOOKUP)
  t.equal(hit.status, 200)
  t.equal(hit.json.meta.cached, true, 'B answers from the shared tier')
  t.equal(sandbox.count('noblbc20'), 1, 'one hub call for both')
  t.same(hit.json.data, warm.json.data)
  t.ok(Number(hit.headers.get('age')) >= 1, 'its age counts from when A fetched it')
  // The same bytes, the same tag: a page that polls gets its 304 from either replica.
  t.equal(hit.headers.get('etag'), warm.headers.get('etag'), 'the same ETag on both')
  // (fetch's no-cache mode: its default mode would add `cache-control: no-cache` to a conditional request.)
  const notModified = await b.request(LOOKUP, { headers: { 'if-none-match': warm.headers.get('etag') ?? '' }, cache: 'no-cache' })
  t.equal(notModified.status, 304)
  t.equal(notModified.text, '')
  t.equal(sandbox.count('noblbc20'), 1, 'and its 304 costs no hub call')
})

test('login mode: one hub login for both replicas, and one new login when the hub refuses the token on both at once', async (t) => {
  const { a, b, sandbox } = await replicas(t, { env: { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '' } })
  t.equal((await a.request(LOOKUP)).status, 200)
  t.equal((await b.request(LOOKUP)).status, 200)
  t.equal(sandbox.count('login'), 1, 'B used the session A logged in with')

  sandbox.expireTokens()
  const answers = await Promise.all([...Array(4)].flatMap(() => [a.request(LOOKUP), b.request(LOOKUP)]))
  t.same(answers.map(r => r.status), Array(8).fill(200), 'every caller answered after the renewal')
  t.equal(sandbox.count('login'), 2, 'one new login for both replicas')
})

test('Redis stopped mid-test: each use degrades as documented; restarted: shared again, without restarting the replicas', async (t) => {
  const { a, b, sandbox, redis } = await replicas(t)
  await bothSubscribed(t, redis)
  for (const replica of [a, b]) {
    t.match((await ready(replica)).json, { data: { status: 'ready', redis: 'up' } }, `${replica.name}: redis up`)
    t.equal(await redisUpGauge(replica), '1')
  }

  await redis.stop()
  for (const replica of [a, b]) {
    await until(async () => (await ready(replica)).json.data?.redis === 'down', 5000, `${replica.name} reports redis down`)
    const health = await ready(replica)
    t.equal(health.status, 200, `${replica.name}: still ready, so the balancer keeps it`)
    t.equal(health.json.data.redis, 'down')
    t.equal(await redisUpGauge(replica), '0', `${replica.name}: gateway_redis_up 0`)
  }

  // Writes with a key: refused before the hub; without one: sent.
  sandbox.reset()
  for (const replica of [a, b]) {
    const refused = await replica.request(OFFERS, { method: 'POST', body: offer, headers: { 'idempotency-key': `down-${replica.name}` } })
    t.equal(refused.status, 503, `${replica.name}: a write with a key is refused`)
    t.equal(refused.json.code, 'IDEMPOTENCY_UNAVAILABLE')
    t.equal(refused.headers.get('retry-after'), '2')
  }
  t.equal(sandbox.count(), 0, 'nothing reached the hub')
  t.equal((await a.request(OFFERS, { method: 'POST', body: offer })).status, 200, 'a write without a key goes on')
  t.equal(sandbox.count('DetilBooking'), 1)

  // Lookups go on.
  t.equal((await b.request(LOOKUP)).status, 200, 'lookups go on')

  // Rate limits: each replica counts on its own, never unlimited.
  const onA: number[] = []
  for (let i = 0; i < 11; i++) onA.push((await a.request(LOOKUP, { key: READER.key })).status)
  t.same(onA, [...Array(10).fill(200), 429], 'A holds the limit by itself')
  t.equal((await b.request(LOOKUP, { key: READER.key })).status, 200, 'B counts its own')

  // Events: the booked POST is answered; its event waits on A until Redis is back (an event
  // delivered before it has its place in the stream would have no id to resume from).
  const [socketA, socketB] = [await a.socket(), await b.socket()]
  t.equal((await a.request(BOOKED, { method: 'POST', body: { booked: true, note: 'redis down' } })).status, 200)
  await sleep(300)
  t.equal(socketA.events.length, 0, 'not on A while Redis is down')
  t.equal(socketB.events.length, 0, 'nor on B')

  await redis.start()
  for (const replica of [a, b]) {
    await until(async () => (await ready(replica)).json.data?.redis === 'up', 10_000, `${replica.name} reports redis up again`)
    t.equal(await redisUpGauge(replica), '1', `${replica.name}: gateway_redis_up 1`)
  }
  await bothSubscribed(t, redis)
  await until(() => socketA.events.length === 1 && socketB.events.length === 1, 5000, 'the event published during the outage, on both')
  t.match([socketA.events, socketB.events], [[{ data: { note: 'redis down' } }], [{ data: { note: 'redis down' } }]], 'once on each, after Redis came back')

  sandbox.reset()
  const first = await b.request(OFFERS, { method: 'POST', body: offer, headers: { 'idempotency-key': 'after-restart' } })
  const again = await a.request(OFFERS, { method: 'POST', body: offer, headers: { 'idempotency-key': 'after-restart' } })
  t.same([first.status, again.status], [200, 200])
  t.equal(again.headers.get('idempotent-replayed'), 'true', 'idempotency shared again')
  t.equal(sandbox.count('DetilBooking'), 1)

  // The restarted Redis holds no counters (no persistence here): ten in all again.
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) statuses.push((await (i % 2 === 0 ? a : b).request(LOOKUP, { key: READER.key })).status)
  t.same(statuses, [...Array(10).fill(200), 429, 429], 'the limit is shared again')

  t.equal((await a.request(BOOKED, { method: 'POST', body: { booked: true, note: 'redis back' } })).status, 200)
  await until(() => socketB.events.length === 2, 5000, 'the event on B')
  await sleep(300)
  t.match(socketB.events, [{ data: { note: 'redis down' } }, { data: { note: 'redis back' } }], 'events cross replicas again, once, in order')
  t.equal(socketA.events.length, 2)
})
