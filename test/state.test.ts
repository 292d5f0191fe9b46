import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import pino from 'pino'
import { test } from 'tap'
import { createState } from '../src/state/index.ts'
import { createMemoryEventBus } from '../src/state/memory/event-bus.ts'
import { createMemoryRateLimitStore } from '../src/state/memory/rate-limit-store.ts'
import { createMemoryTokenStore } from '../src/state/memory/token-store.ts'
import type { GatewayEvent, HubSession, RateLimitStore } from '../src/state/types.ts'

// The in-memory state (src/state/memory/) against the interfaces of
// src/state/types.ts; the gateway's own tests use it through the app.

function event (note: string): GatewayEvent {
  return { id: randomUUID(), type: 'booking.booked', occurredAt: new Date().toISOString(), requestId: `req-${note}`, client: null, data: { note } }
}

function logger () {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'debug' }, new Writable({ write (chunk: Buffer, _encoding, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } }))
  return { log, lines }
}

/** The settings createState reads besides the idempotency bounds, as the config defaults them, without REDIS_URL. */
const MEMORY = { REDIS_KEY_PREFIX: 'cgw:', REDIS_COMMAND_TIMEOUT_MS: 500, UPSTREAM_DEADLINE_MS: 15000, UPSTREAM_HEADERS_TIMEOUT_MS: 10000, REDIS_SENTINEL_MASTER_NAME: 'mymaster', REDIS_REPLICA_ACK_TIMEOUT_MS: 100 }

test('createState: the memory implementations, with the configured idempotency bounds and the clock given', async (t) => {
  let now = 1_000_000
  const state = await createState({ ...MEMORY, IDEMPOTENCY_TTL_SECONDS: 2, IDEMPOTENCY_MAX_ENTRIES: 10 }, { clock: () => now, log: logger().log })
  t.teardown(() => state.close())
  t.same(await state.idempotency.begin('k', 'f'), { state: 'acquired' })
  await state.idempotency.complete('k', { statusCode: 200, headers: {}, body: '{}' })
  now += 1999
  t.equal((await state.idempotency.begin('k', 'f')).state, 'completed', 'within IDEMPOTENCY_TTL_SECONDS, by the clock given')
  now += 1
  t.equal((await state.idempotency.begin('k', 'f')).state, 'acquired', 'forgotten once the clock passes it')
  const RateLimitStore = state.rateLimitStore
  t.equal(typeof new RateLimitStore({}).incr, 'function')
  const seen: string[] = []
  state.events.subscribe(e => seen.push(e.requestId))
  await state.events.publish(event('a'))
  t.same(seen, ['req-a'])
})

test('memory event bus: every subscriber gets each event before publish returns; a failing one is logged and the others still get it', async (t) => {
  const { log, lines } = logger()
  const bus = createMemoryEventBus({ log })
  const a: string[] = []
  const b: string[] = []
  const stopA = bus.subscribe(e => a.push(String(e.data.note)))
  bus.subscribe(() => { throw new Error('socket gone') })
  bus.subscribe(e => b.push(String(e.data.note)))
  const published = bus.publish(event('one'))
  t.same([a, b], [['one'], ['one']], 'delivered synchronously, in this process')
  await t.resolves(published, 'never throws')
  t.match(lines, [{ level: 50, msg: 'event listener failed', err: { message: 'socket gone' } }])
  stopA()
  await bus.publish(event('two'))
  t.same([a, b], [['one'], ['one', 'two']], 'an unsubscribed listener gets nothing more')
  await bus.close()
  await bus.publish(event('three'))
  t.same(b, ['one', 'two'], 'closed: no subscribers left')
})

test('memory token store: one login at a time, shared; a replaced session is returned without a login', async (t) => {
  let now = 0
  const tokens = createMemoryTokenStore({ clock: () => now })
  let logins = 0
  let release = () => {}
  const login = async (): Promise<HubSession> => {
    logins++
    await new Promise<void>(resolve => { release = resolve })
    return { authorization: `token-${logins}`, expiresAt: now + 1000 }
  }
  t.equal(await tokens.get(), undefined, 'no session before a login')
  const first = [tokens.renew(undefined, login), tokens.renew(undefined, login)]
  release()
  const [a, b] = await Promise.all(first)
  t.equal(logins, 1, 'concurrent callers share one login')
  t.same(a, { authorization: 'token-1', expiresAt: 1000 })
  t.equal(b, a)
  t.equal(await tokens.get(), a)
  t.equal(await tokens.renew(undefined, login), a, 'a first login with a session held: that session')
  t.equal(await tokens.renew('token-0', login), a, 'a rejected session that is no longer held: the one that replaced it')
  t.equal(logins, 1)
  const renewing = tokens.renew('token-1', login)
  release()
  t.same(await renewing, { authorization: 'token-2', expiresAt: 1000 }, 'the held session refused: a new login')
  now = 1000
  t.equal(await tokens.get(), undefined, 'an expired session is not handed out')
  const failing = tokens.renew(undefined, async () => { throw new Error('hub down') })
  await t.rejects(failing, { message: 'hub down' })
  const after = tokens.renew(undefined, login)
  release()
  t.equal((await after).authorization, 'token-3', 'a failed login is not kept: the next caller logs in')
})

test('memory rate-limit store: @fastify/rate-limit\'s own counting, per key and window', async (t) => {
  const Store = createMemoryRateLimitStore({ cache: 2 })
  const store: RateLimitStore = new Store({ continueExceeding: false, exponentialBackoff: false })
  const count = (method: 'incr' | 'read', key: string) => new Promise<{ current: number, ttl: number }>((resolve, reject) =>
    store[method](key, (error, result) => { if (error !== null || result === undefined) reject(error ?? new Error('no result')); else resolve(result) }, 60_000, 5))
  t.equal((await count('incr', 'a')).current, 1)
  t.equal((await count('incr', 'a')).current, 2)
  t.equal((await count('read', 'a')).current, 2, 'read does not count')
  t.equal((await count('incr', 'b')).current, 1, 'each key on its own')
  await count('incr', 'c')
  t.equal((await count('read', 'a')).current, 0, 'past `cache` keys the least recently used is forgotten')
})
