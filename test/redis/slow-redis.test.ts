import { test } from 'tap'
import { createRedisEventLog } from '../../src/state/redis/event-log.ts'
import { createRedisIdempotencyStore } from '../../src/state/redis/idempotency.ts'
import { createRedisLookupTier } from '../../src/state/redis/lookup-tier.ts'
import { createRedisRateLimitStore } from '../../src/state/redis/rate-limit-store.ts'
import { createRedisTokenStore } from '../../src/state/redis/token-store.ts'
import type { RedisConnection } from '../../src/state/redis/connection.ts'
import { acquire } from '../helper.ts'
import { AT_ONCE_MS, connect, startRedisServer, until } from './redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

const RESPONSE = { statusCode: 200, headers: {}, body: '{}' }
/**
 * Shorter than the other tests' timeout: this file waits it out once per operation. Still a
 * second, so that the set-up's commands to a healthy Redis do not time out on a loaded machine.
 */
const COMMAND_TIMEOUT_MS = 1000
/**
 * What a call may take beyond the command timeout on a loaded machine. A call that the timeout
 * did not end waits for the frozen Redis, or the 10 s claim lease and login lock: far longer.
 */
const MARGIN_MS = 2000

/**
 * Every store of a replica, with two idempotency claims held, while Redis answers;
 * then `run` times every operation of every store (against a Redis that does not answer).
 */
async function stores (t: Test, connection: RedisConnection) {
  const lookups = createRedisLookupTier({ connection, maxEntryBytes: 1024 })
  const idempotency = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 10_000 })
  const held = await Promise.all(['held-1', 'held-2'].map(key => acquire(idempotency, key, 'fp')))
  const Store = createRedisRateLimitStore(connection)
  const rateLimits = new Store({})
  const events = createRedisEventLog({ connection, clock: Date.now, windowMs: 60_000, maxEntries: 100, blockMs: 100 })
  t.teardown(() => events.close())
  const tokens = createRedisTokenStore({ connection, lockTtlMs: 10_000 })
  const now = Date.now()

  const operations: Record<string, () => Promise<unknown>> = {
    'lookup get': async () => t.equal(await lookups.get('k'), undefined, 'a miss'),
    'lookup set': () => lookups.set('k', { json: Buffer.from('[]'), count: 0, upstreamStatus: 200, fetchedAt: now, expiresAt: now + 1000, staleUntil: now + 2000 }),
    'idempotency begin': () => t.rejects(idempotency.begin('new', 'fp'), { code: 'STATE_UNAVAILABLE' }),
    'idempotency complete': () => held[0]!.complete(RESPONSE),
    'idempotency release': () => held[1]!.release(),
    'rate limit': () => new Promise<void>((resolve, reject) => rateLimits.incr('client:alice', (error, result) => {
      if (error !== null) return reject(error)
      t.equal(result?.current, 1, 'counted locally')
      resolve()
    }, 60_000, 10)),
    'event publish': async () => {
      await events.publish({ type: 'booking.booked', occurredAt: new Date().toISOString(), requestId: 'r', client: null, data: {} })
    },
    'event replay': async () => t.equal((await events.since('1-0')).state, 'unavailable', 'a reader that resumes is told to reload'),
    'token get': async () => t.equal(await tokens.get(), undefined),
    'token renew': async () => t.equal((await tokens.renew(undefined, async () => ({ authorization: 'Bearer own', expiresAt: Date.now() + 60_000 }))).authorization, 'Bearer own', 'logged in without Redis')
  }
  return async function run (boundMs: number) {
    for (const [name, operation] of Object.entries(operations)) {
      const started = performance.now()
      await operation()
      const took = performance.now() - started
      t.ok(took < boundMs, `${name}: ${Math.round(took)} ms (bound ${boundMs} ms)`)
    }
  }
}

test('a frozen Redis holds no call longer than the command timeout, before the health check has noticed', async (t) => {
  const server = await startRedisServer(t)
  // No health check within the test: every call reaches the frozen server and times out.
  const connection = await connect(t, server, { healthCheckIntervalMs: 60_000, commandTimeoutMs: COMMAND_TIMEOUT_MS })
  const run = await stores(t, connection)
  t.teardown(() => server.resume())
  server.pause()
  t.equal(connection.health(), 'up', 'not noticed yet')
  await run(COMMAND_TIMEOUT_MS + MARGIN_MS)
})

test('once the health check has found Redis frozen, no call waits at all', async (t) => {
  const server = await startRedisServer(t)
  const connection = await connect(t, server)
  const run = await stores(t, connection)
  t.teardown(() => server.resume())
  server.pause()
  await until(() => connection.health() === 'down', 2000, 'down')
  await run(AT_ONCE_MS)
})

test('a stopped Redis holds no call at all', async (t) => {
  const server = await startRedisServer(t)
  const connection = await connect(t, server, { healthCheckIntervalMs: 60_000 })
  const run = await stores(t, connection)
  await server.stop()
  await until(() => connection.health() === 'down', 2000, 'down')
  await run(AT_ONCE_MS)
})

test('the waits of a claim held elsewhere end within the command timeout when Redis freezes', async (t) => {
  const server = await startRedisServer(t)
  const settings = { healthCheckIntervalMs: 60_000, commandTimeoutMs: COMMAND_TIMEOUT_MS }
  const [a, b] = await Promise.all([connect(t, server, settings), connect(t, server, settings)])
  t.teardown(() => server.resume())
  await createRedisIdempotencyStore({ connection: a, ttlMs: 60_000, claimTtlMs: 10_000 }).begin('held-1', 'fp')
  const waiting = await createRedisIdempotencyStore({ connection: b, ttlMs: 60_000, claimTtlMs: 10_000 }).begin('held-1', 'fp')
  if (waiting.state !== 'in-flight') throw new Error(`expected in flight, got ${waiting.state}`)
  server.pause()
  const started = performance.now()
  await waiting.settled
  const took = performance.now() - started
  t.ok(took < COMMAND_TIMEOUT_MS + MARGIN_MS,
    `settled ${Math.round(took)} ms after the freeze (a poll and a command timeout at most)`)
})
