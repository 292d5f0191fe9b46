import rateLimit from '@fastify/rate-limit'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { createRedisRateLimitStore, RATE_LIMIT_NAMESPACE } from '../../src/state/redis/rate-limit-store.ts'
import type { RedisConnection } from '../../src/state/redis/connection.ts'
import { connect, startRedisServer, until, type LogLines } from './redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

/** A replica: Fastify with @fastify/rate-limit, 10 a minute per client, counting in the Redis store. */
async function replica (t: Test, connection: RedisConnection) {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(rateLimit, {
    max: 10,
    timeWindow: 60_000,
    keyGenerator: (request) => `client:${String(request.headers['x-client'])}`,
    store: createRedisRateLimitStore(connection)
  })
  app.get('/lookup', async () => ({ ok: true }))
  app.get('/narrow', { config: { rateLimit: { max: 2, timeWindow: 60_000 } } }, async () => ({ ok: true }))
  await app.ready()
  return async (client = 'alice', url = '/lookup') => {
    const res = await app.inject({ url, headers: { 'x-client': client } })
    return res.statusCode
  }
}

async function replicas (t: Test) {
  const server = await startRedisServer(t)
  const logs: LogLines = []
  const [ca, cb] = await Promise.all([connect(t, server, { logs }), connect(t, server)])
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  return { server, raw, logs, connections: [ca, cb] as const, a: await replica(t, ca), b: await replica(t, cb) }
}

test('a limit of 10 a minute holds across replicas A and B', async (t) => {
  const { a, b, raw } = await replicas(t)
  const statuses = []
  for (let i = 0; i < 10; i++) statuses.push(await (i % 2 === 0 ? a : b)())
  t.same(statuses, Array(10).fill(200), '10 requests, spread over both')
  t.equal(await a(), 429, 'the 11th on A')
  t.equal(await b(), 429, 'and on B')
  t.equal(await a('bob'), 200, 'another client has its own count')
  t.equal(await raw.get(`test:${RATE_LIMIT_NAMESPACE}client:alice`), '12', 'counted in Redis, under the prefix')
  const ttl = await raw.pttl(`test:${RATE_LIMIT_NAMESPACE}client:alice`)
  t.ok(ttl > 59_000 && ttl <= 60_000, `for the window (${ttl} ms)`)
})

test('read() (the plugin\'s `increment: false`) sees the count of every replica without counting', async (t) => {
  const server = await startRedisServer(t)
  const [ca, cb] = await Promise.all([connect(t, server), connect(t, server)])
  const [a, b] = [ca, cb].map(connection => new (createRedisRateLimitStore(connection))({}))
  const call = (method: 'incr' | 'read', store: typeof a) => new Promise((resolve, reject) =>
    store?.[method]('client:alice', (error, result) => error === null ? resolve(result?.current) : reject(error), 60_000, 10))
  await call('incr', a)
  await call('incr', a)
  t.equal(await call('read', b), 2)
  t.equal(await call('read', b), 2, 'not counted')
  await server.stop()
  await until(() => cb.health() === 'down', 2000, 'down')
  t.equal(await call('read', b), 0, 'while Redis is down, the local count')
})

test('a route with its own limit (child store) is shared too', async (t) => {
  const { a, b } = await replicas(t)
  t.same([await a('alice', '/narrow'), await b('alice', '/narrow'), await a('alice', '/narrow')], [200, 200, 429])
  t.equal(await b(), 200, 'the global limit counts apart')
})

test('with Redis stopped each replica enforces the limit on its own, and shares it again when Redis is back', async (t) => {
  const { server, a, b, logs, connections } = await replicas(t)
  t.equal(await a(), 200)
  await server.stop()
  await until(() => connections.every(c => c.health() === 'down'), 2000, 'down')

  for (const [name, send] of [['A', a], ['B', b]] as const) {
    const statuses = []
    for (let i = 0; i < 11; i++) statuses.push(await send())
    t.same(statuses, [...Array(10).fill(200), 429], `${name}: 10 allowed, then 429: its own limit, not unlimited`)
  }
  t.same([await a('alice', '/narrow'), await a('alice', '/narrow'), await a('alice', '/narrow')], [200, 200, 429], 'route limits too')
  t.equal(logs.filter(line => line.msg === 'rate limits: Redis unavailable, counting in this replica').length, 1, 'the fallback is logged once')

  await server.start()
  t.equal(await connections[0].whenUp(3000), true)
  t.equal(await connections[1].whenUp(3000), true)
  // The restarted Redis (no persistence) starts from zero, shared again.
  const statuses = []
  for (let i = 0; i < 10; i++) statuses.push(await (i % 2 === 0 ? a : b)('carol'))
  t.same(statuses, Array(10).fill(200))
  t.equal(await b('carol'), 429, 'the 11th across both is refused again')
  t.ok(logs.some(line => line.msg === 'rate limits: counting in Redis again'), 'the recovery is logged')
})

test('the local fallback keeps as many keys as its cache option says', async (t) => {
  const server = await startRedisServer(t)
  const connection = await connect(t, server)
  const Store = createRedisRateLimitStore(connection, { cache: 1 })
  const store = new Store({})
  const count = (key: string) => new Promise((resolve, reject) =>
    store.incr(key, (error, result) => error === null ? resolve(result?.current) : reject(error), 60_000, 10))
  await server.stop()
  await until(() => connection.health() === 'down', 2000, 'down')
  t.same([await count('a'), await count('a'), await count('b'), await count('a')], [1, 2, 1, 1], "one key: b's count pushed a's out")
})

test('a count that fails in Redis (a frozen server) is made locally after the command timeout', async (t) => {
  const server = await startRedisServer(t)
  // No health check within the test: the command itself has to fail.
  const connection = await connect(t, server, { healthCheckIntervalMs: 60_000 })
  const send = await replica(t, connection)
  server.pause()
  t.equal(connection.health(), 'up')
  for (let i = 0; i < 2; i++) {
    const started = performance.now()
    t.equal(await send(), 200, 'answered, counted in this replica')
    const waited = performance.now() - started
    // A margin of seconds for a loaded machine; without the timeout the count would wait forever.
    t.ok(waited < connection.commandTimeoutMs + 3000,
      `after the command timeout at most (${Math.round(waited)} ms)`)
  }
  server.resume()
})
