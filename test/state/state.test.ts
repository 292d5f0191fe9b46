import { Writable } from 'node:stream'
import pino from 'pino'
import { test } from 'tap'
import { createState } from '../../src/state/index.ts'
import {
  compareEventIds,
  nextEventId,
  parseEventId,
  previousEventId
} from '../../src/state/event-ids.ts'
import { createMemoryEventLog } from '../../src/state/memory/event-log.ts'
import { createMemoryRateLimitStore } from '../../src/state/memory/rate-limit-store.ts'
import { createMemoryTicketStore } from '../../src/state/memory/ticket-store.ts'
import { createMemoryTokenStore } from '../../src/state/memory/token-store.ts'
import type { HubSession, LogEntry, NewEvent, RateLimitStore } from '../../src/state/types.ts'
import { acquire } from '../helpers/helper.ts'

// The in-memory state (src/state/memory/) against the interfaces of
// src/state/types.ts; the gateway's own tests use it through the app.

function event (note: string): NewEvent {
  return {
    type: 'booking.booked',
    occurredAt: new Date().toISOString(),
    requestId: `req-${note}`,
    client: null,
    data: { note }
  }
}

const noteOf = (entry: LogEntry) =>
  entry.type === 'booking.booked' ? String(entry.data.note) : entry.type

function logger () {
  const lines: Array<Record<string, unknown>> = []
  const log = pino(
    { level: 'debug' },
    new Writable({
      write (chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
        done()
      }
    })
  )
  return { log, lines }
}

/**
 * The settings createState reads besides the idempotency bounds, as the config defaults them,
 * without REDIS_URL.
 */
const MEMORY = {
  REDIS_KEY_PREFIX: 'cgw:',
  REDIS_COMMAND_TIMEOUT_MS: 500,
  UPSTREAM_DEADLINE_MS: 15000,
  EVENTS_REPLAY_SECONDS: 300,
  EVENTS_REPLAY_MAX: 10_000,
  REDIS_SENTINEL_MASTER_NAME: 'mymaster',
  REDIS_REPLICA_ACK_TIMEOUT_MS: 100
}

test('createState: the memory implementations, with the configured idempotency bounds and the ' +
  'clock given', async (t) => {
  let now = 1_000_000
  const config = { ...MEMORY, IDEMPOTENCY_TTL_SECONDS: 2, IDEMPOTENCY_MAX_ENTRIES: 10 }
  const deps = { clock: () => now, log: logger().log, loginTimeoutMs: 10_000 }
  const state = await createState(config, deps)
  t.teardown(() => state.close())
  const claim = await acquire(state.idempotency, 'k', 'f')
  await claim.complete({ statusCode: 200, headers: {}, body: '{}' })
  now += 1999
  t.equal(
    (await state.idempotency.begin('k', 'f')).state,
    'completed',
    'within IDEMPOTENCY_TTL_SECONDS, by the clock given'
  )
  now += 1
  t.match(await state.idempotency.begin('k', 'f'), { state: 'acquired' }, 'forgotten once past it')
  const RateLimitStore = state.rateLimitStore
  t.equal(typeof new RateLimitStore({}).incr, 'function')
  const seen: string[] = []
  state.events.subscribe((e) => seen.push(noteOf(e)))
  await state.events.publish(event('a'))
  t.same(seen, ['a'])
  t.same(await state.tickets.redeem('none'), undefined, 'tickets too')
})

test('memory event log: every subscriber gets each event before publish returns; a failing one ' +
  'is logged and the others still get it', async (t) => {
  const { log, lines } = logger()
  const bus = createMemoryEventLog({ log, clock: Date.now, windowMs: 60_000, maxEntries: 100 })
  const a: string[] = []
  const b: string[] = []
  const stopA = bus.subscribe((e) => a.push(noteOf(e)))
  bus.subscribe(() => {
    throw new Error('socket gone')
  })
  bus.subscribe((e) => b.push(noteOf(e)))
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

test('event ids: <ms>-<seq> as Redis makes them, ordered by milliseconds then ' +
  'sequence', async (t) => {
  t.equal(nextEventId('0-0', 1000), '1000-0')
  t.equal(nextEventId('1000-0', 1000), '1000-1', 'the same millisecond counts on')
  t.equal(nextEventId('1000-1', 999), '1000-2', 'so does a clock gone back')
  t.equal(nextEventId('1000-2', 1001), '1001-0')
  t.ok(compareEventIds('999-5', '1000-0') < 0)
  t.ok(compareEventIds('1000-10', '1000-9') > 0, 'numbers, not text')
  t.equal(compareEventIds('1-1', '1-1'), 0)
  t.throws(() => compareEventIds('x', '1-1'))
  t.same(parseEventId('12-3'), { ms: 12, seq: 3 })
  t.equal(parseEventId('12'), undefined)
  t.same(
    [previousEventId('5-2'), previousEventId('5-0'), previousEventId('0-0')],
    ['5-1', '4-999999999999999', '0-0']
  )
})

test('memory event log: ids in order; since() gives what follows an id of the window, and ' +
  'expired for one it no longer holds', async (t) => {
  let now = 1_000_000
  const bus = createMemoryEventLog({
    log: logger().log,
    clock: () => now,
    windowMs: 10_000,
    maxEntries: 3
  })
  const seen: LogEntry[] = []
  bus.subscribe((e) => seen.push(e))
  t.equal(bus.position(), '0-0')
  t.same(await bus.since('0-0'), { state: 'replayed', entries: [] }, 'an empty log: nothing missed')
  await bus.publish(event('a'))
  await bus.publish(event('b'))
  now += 1
  await bus.publish(event('c'))
  t.same(
    seen.map((e) => e.id),
    ['1000000-0', '1000000-1', '1000001-0']
  )
  t.equal(bus.position(), '1000001-0')
  const after = async (id: string) => {
    const r = await bus.since(id)
    return r.state === 'replayed' ? r.entries.map(noteOf) : r.state
  }
  t.same(await after('0-0'), ['a', 'b', 'c'], 'nothing dropped yet: from the start')
  t.same(await after('1000000-0'), ['b', 'c'])
  t.same(await after('1000001-0'), [], 'at the end')
  t.equal(await after('1000000-5'), 'expired', 'an id never given out')
  t.equal(await after('2000000-0'), 'expired', 'an id of the future')
  await bus.publish(event('d'))
  t.equal(await after('0-0'), 'expired', 'EVENTS_REPLAY_MAX: the first is gone')
  t.same(
    await after('1000000-0'),
    ['b', 'c', 'd'],
    'the last one dropped is still a place to resume from: nothing after it is missing'
  )
  now += 10_000
  t.same(await after('1000001-0'), ['d'], 'within EVENTS_REPLAY_SECONDS')
  now += 1
  t.equal(await after('1000001-0'), 'expired', 'past it')
  t.same(
    await after('1000001-1'),
    [],
    'd itself was published at 1000001 and left with the window too, but a reader at it missed ' +
    'nothing'
  )
})

test('memory ticket store: a ticket is redeemed once, before it expires; the oldest go past the ' +
  'bound', async (t) => {
  let now = 0
  const tickets = createMemoryTicketStore({ clock: () => now, maxEntries: 2 })
  await tickets.issue('t1', 'yard-a', 1000)
  await tickets.issue('t2', null, 1000)
  t.same(await tickets.redeem('t1'), { client: 'yard-a' })
  t.same(await tickets.redeem('t1'), undefined, 'once')
  now = 1000
  t.same(await tickets.redeem('t2'), undefined, 'expired')
  await tickets.issue('t3', 'a', 5000)
  await tickets.issue('t4', 'b', 5000)
  await tickets.issue('t5', 'c', 5000)
  t.same(await tickets.redeem('t3'), undefined, 'the oldest went')
  t.same(
    [await tickets.redeem('t4'), await tickets.redeem('t5')],
    [{ client: 'b' }, { client: 'c' }]
  )
})

test('memory token store: one login at a time, shared; a replaced session is returned without a ' +
  'login', async (t) => {
  let now = 0
  const tokens = createMemoryTokenStore({ clock: () => now })
  let logins = 0
  let release = () => {}
  const login = async (): Promise<HubSession> => {
    logins++
    await new Promise<void>((resolve) => {
      release = resolve
    })
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
  t.equal(
    await tokens.renew(undefined, login),
    a,
    'a first login with a session held: that session'
  )
  t.equal(
    await tokens.renew('token-0', login),
    a,
    'a rejected session that is no longer held: the one that replaced it'
  )
  t.equal(logins, 1)
  const renewing = tokens.renew('token-1', login)
  release()
  t.same(
    await renewing,
    { authorization: 'token-2', expiresAt: 1000 },
    'the held session refused: a new login'
  )
  now = 1000
  t.equal(await tokens.get(), undefined, 'an expired session is not handed out')
  const failing = tokens.renew(undefined, async () => {
    throw new Error('hub down')
  })
  await t.rejects(failing, { message: 'hub down' })
  const after = tokens.renew(undefined, login)
  release()
  t.equal(
    (await after).authorization,
    'token-3',
    'a failed login is not kept: the next caller logs in'
  )
})

test("memory rate-limit store: @fastify/rate-limit's own counting, per key and " +
  'window', async (t) => {
  const Store = createMemoryRateLimitStore({ cache: 2 })
  const store: RateLimitStore = new Store({ continueExceeding: false, exponentialBackoff: false })
  const count = (method: 'incr' | 'read', key: string) =>
    new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      store[method](
        key,
        (error, result) => {
          if (error !== null || result === undefined) reject(error ?? new Error('no result'))
          else resolve(result)
        },
        60_000,
        5
      )
    )
  t.equal((await count('incr', 'a')).current, 1)
  t.equal((await count('incr', 'a')).current, 2)
  t.equal((await count('read', 'a')).current, 2, 'read does not count')
  t.equal((await count('incr', 'b')).current, 1, 'each key on its own')
  await count('incr', 'c')
  t.equal(
    (await count('read', 'a')).current,
    0,
    'past `cache` keys the least recently used is forgotten'
  )
})
