import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { createRedisTokenStore, LOCK_KEY, SESSION_KEY, type RedisTokenStoreOptions } from '../../src/state/redis/token-store.ts'
import type { HubSession } from '../../src/state/types.ts'
import { AT_ONCE_MS, connect, startRedisServer, until } from './redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

/** The hub's login, counted: each call a new token (`token-<n>-<hub>`), after `delayMs`. */
function hub (delayMs = 50) {
  const logins: string[] = []
  const id = randomUUID().slice(0, 8)
  return {
    logins,
    login: (holder: string) => async (): Promise<HubSession> => {
      logins.push(holder)
      await sleep(delayMs)
      return { authorization: `Bearer token-${logins.length}-${id}`, expiresAt: Date.now() + 60_000 }
    }
  }
}

async function replicas (t: Test, options: Partial<RedisTokenStoreOptions> = {}) {
  const server = await startRedisServer(t)
  const [ca, cb] = await Promise.all([connect(t, server), connect(t, server)])
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  const settings = { lockTtlMs: 2000, ...options }
  return {
    server,
    raw,
    connections: [ca, cb] as const,
    a: createRedisTokenStore({ connection: ca, ...settings }),
    b: createRedisTokenStore({ connection: cb, ...settings })
  }
}

test('a 401 seen by A and B at once gives one login, and both get the new session', async (t) => {
  const { a, b } = await replicas(t)
  const { logins, login } = hub()
  const first = await a.renew(undefined, login('A'))
  t.same(await b.get(), first, 'the first login is shared')

  const renewed = await Promise.all([
    a.renew(first.authorization, login('A')),
    b.renew(first.authorization, login('B')),
    b.renew(first.authorization, login('B'))
  ])
  t.equal(logins.length, 2, 'one login for the first session, one for the 401')
  t.not(renewed[0].authorization, first.authorization)
  t.same(renewed[1], renewed[0], 'B waited for it instead of logging in')
  t.same(renewed[2], renewed[0])
  t.same(await a.get(), renewed[0])
})

test('a holder whose rejected session was already replaced gets the new one without a login', async (t) => {
  const { a, b } = await replicas(t)
  const { logins, login } = hub()
  const first = await a.renew(undefined, login('A'))
  const second = await a.renew(first.authorization, login('A'))
  t.same(await b.renew(first.authorization, login('B')), second)
  t.same(await b.renew(undefined, login('B')), second, 'a first login on B finds the shared session')
  t.same(logins, ['A', 'A'])
})

test('the session is stored until it expires, as a versioned value', async (t) => {
  const { a, b, raw } = await replicas(t)
  // Seconds to live: long enough for the reads below on a loaded machine, short to wait out.
  const lifeMs = 3000
  const session = await a.renew(undefined,
    async () => ({ authorization: 'Bearer short', expiresAt: Date.now() + lifeMs }))
  const stored = JSON.parse(await raw.get(`test:${SESSION_KEY}`) ?? 'null')
  t.same(stored, { v: 1, ...session })
  const ttl = await raw.pttl(`test:${SESSION_KEY}`)
  t.ok(ttl > 0 && ttl <= lifeMs, `PX until it expires (${ttl} ms)`)
  t.same(await b.get(), session)
  await until(async () => await b.get() === undefined, 10_000, 'gone when expired')
  t.equal(await raw.get(`test:${LOCK_KEY}`), null, 'the lock was released')

  for (const value of [JSON.stringify({ v: 2, authorization: 'Bearer other', expiresAt: Date.now() + 60_000 }), 'null', 'not json']) {
    await raw.set(`test:${SESSION_KEY}`, value)
    t.equal(await b.get(), undefined, `a session of another format is not used: ${value.slice(0, 10)}`)
  }
})

test('a failed login releases the lock: the holder waiting behind it logs in', async (t) => {
  const { a, b, raw } = await replicas(t)
  const { logins, login } = hub()
  const failing = a.renew(undefined, async () => {
    logins.push('A')
    await sleep(50)
    throw new Error('hub login refused')
  })
  await until(async () => await raw.exists(`test:${LOCK_KEY}`) === 1, 2000, 'A holds the lock')
  const waiting = b.renew(undefined, login('B'))
  await t.rejects(failing, { message: 'hub login refused' }, "A's caller gets its login's error")
  const session = await waiting
  t.same(logins, ['A', 'B'])
  t.same(await a.get(), session)
})

test('a lock left by a holder that died expires, and the next holder logs in', async (t) => {
  // A wait of 30 s at most (lockTtlMs): a holder that did not see the lock expire would wait that.
  const { a, raw } = await replicas(t, { lockTtlMs: 30_000 })
  await raw.set(`test:${LOCK_KEY}`, 'a holder that died', 'PX', 200)
  const { logins, login } = hub()
  const started = performance.now()
  await a.renew(undefined, login('A'))
  const waited = performance.now() - started
  t.ok(waited >= 190 && waited < 10_000, `waited for the lock to expire (${Math.round(waited)} ms)`)
  t.same(logins, ['A'])
})

test('a holder does not wait longer than waitMs for a lock that stays taken: it logs in itself', async (t) => {
  // The lock's own lifetime is 30 s: a wait bounded by it rather than waitMs would take that.
  const { a, raw } = await replicas(t, { waitMs: 200, lockTtlMs: 30_000 })
  await raw.set(`test:${LOCK_KEY}`, 'stuck', 'PX', 60_000)
  const { logins, login } = hub(0)
  const started = performance.now()
  const session = await a.renew(undefined, login('A'))
  const waited = performance.now() - started
  t.ok(waited >= 190 && waited < 10_000, `after waitMs (${Math.round(waited)} ms)`)
  t.same(logins, ['A'])
  t.match(session.authorization, /^Bearer token-1-/)
})

test('with Redis down, get() is undefined at once and renew() logs in without it', async (t) => {
  const { server, a, connections } = await replicas(t)
  const { logins, login } = hub(0)
  await server.stop()
  await until(() => connections[0].health() === 'down', 2000, 'down')
  const started = performance.now()
  t.equal(await a.get(), undefined)
  const session = await a.renew('Bearer old', login('A'))
  const took = performance.now() - started
  t.ok(took < AT_ONCE_MS, `without waiting (${Math.round(took)} ms)`)
  t.match(session.authorization, /^Bearer token-1-/)
  t.same(logins, ['A'])

  await server.start()
  t.equal(await connections[0].whenUp(3000), true)
  const shared = await a.renew(undefined, login('A'))
  t.same(await a.get(), shared, 'shared again once Redis is back')
})

test('many holders renewing at once log in once, however their reads and the lock interleave', async (t) => {
  const server = await startRedisServer(t)
  const connections = await Promise.all(Array.from({ length: 8 }, () => connect(t, server)))
  const stores = connections.map(connection => createRedisTokenStore({ connection, lockTtlMs: 2000 }))
  let rejected = 'Bearer expired'
  for (let round = 0; round < 10; round++) {
    const { logins, login } = hub(0)
    const sessions = await Promise.all(stores.map((store, i) => store.renew(rejected, login(`holder ${i}`))))
    t.equal(logins.length, 1, `round ${round}: one login`)
    t.equal(new Set(sessions.map(s => s.authorization)).size, 1, `round ${round}: one session for all`)
    rejected = sessions[0]?.authorization ?? ''
  }
})
