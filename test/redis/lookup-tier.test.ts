import { Redis } from 'ioredis'
import { test } from 'tap'
import { createRedisLookupTier, lookupKey } from '../../src/state/redis/lookup-tier.ts'
import type { SharedLookupEntry } from '../../src/state/types.ts'
import { AT_ONCE_MS, connect, startRedisServer, until } from './redis-server.ts'

const KEY = 'login https://hub.example/HUB/noblbc16?npwp=012345678901000'

function entry (now: number, overrides: Partial<SharedLookupEntry> = {}): SharedLookupEntry {
  return {
    json: Buffer.from('[{"blNo":"BL-1","note":"Pelabuhan Tanjung Priok \u2013 ümlaut"}]'),
    count: 1,
    upstreamStatus: 200,
    fetchedAt: now - 1500,
    expiresAt: now + 30_000,
    staleUntil: now + 300_000,
    ...overrides
  }
}

type Test = Parameters<Parameters<typeof test>[0]>[0]

/** One Redis, and the tier of two replicas, each with its own connection. */
async function replicas (t: Test, maxEntryBytes = 1024 * 1024) {
  const server = await startRedisServer(t)
  const [a, b] = await Promise.all([connect(t, server), connect(t, server)])
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  return { server, raw, a: createRedisLookupTier({ connection: a, maxEntryBytes }), b: createRedisLookupTier({ connection: b, maxEntryBytes }) }
}

test('a lookup stored by replica A is a hit on replica B, byte for byte, with the same fetchedAt', async (t) => {
  const { a, b } = await replicas(t)
  const now = Date.now()
  t.equal(await b.get(KEY), undefined, 'a miss before')
  const stored = entry(now)
  await a.set(KEY, stored)
  const hit = await b.get(KEY)
  t.same(hit, { ...stored, json: hit?.json }, 'count, status and times as stored')
  t.ok(hit?.json.equals(stored.json), 'the JSON, byte for byte')
  t.equal(hit?.fetchedAt, stored.fetchedAt, 'so `age` is the same on both')

  const record = entry(now, { count: undefined, json: Buffer.from('{"pibNo":"000123"}') })
  await a.set(`${KEY}&record`, record)
  t.equal((await b.get(`${KEY}&record`))?.count, undefined, 'a record has no count')
})

test('the Redis TTL is staleUntil; an entry past its TTL but within staleUntil is still returned', async (t) => {
  const { a, b, raw } = await replicas(t)
  const now = Date.now()
  // Seconds to live: long enough for the read below on a loaded machine, short to wait out.
  const staleMs = 3000
  await a.set(KEY, entry(now, { expiresAt: now - 1, staleUntil: now + staleMs }))
  const ttl = await raw.pttl(`test:${lookupKey(KEY)}`)
  t.ok(ttl > 0 && ttl <= staleMs, `PX = staleUntil - now (${ttl} ms)`)
  t.ok(await b.get(KEY), 'expired but not past staleUntil: returned (the caller may serve it stale)')
  const key = `test:${lookupKey(KEY)}`
  await until(async () => await raw.exists(key) === 0, 10_000, 'Redis expires it')
  t.equal(await b.get(KEY), undefined, 'gone after staleUntil')
})

test('a replica whose clock is past staleUntil treats the entry as a miss', async (t) => {
  const server = await startRedisServer(t)
  const [a, b] = await Promise.all([connect(t, server), connect(t, server)])
  const now = Date.now()
  await createRedisLookupTier({ connection: a, maxEntryBytes: 1024 }).set(KEY, entry(now))
  const ahead = createRedisLookupTier({ connection: b, maxEntryBytes: 1024, now: () => now + 300_000 })
  t.equal(await ahead.get(KEY), undefined)
})

test('answers over maxEntryBytes and entries already past staleUntil are not stored', async (t) => {
  const { a, raw } = await replicas(t, 16)
  const now = Date.now()
  await a.set('big', entry(now, { json: Buffer.alloc(17, 'x') }))
  await a.set('exact', entry(now, { json: Buffer.alloc(16, 'x') }))
  await a.set('past', entry(now, { json: Buffer.from('[]'), staleUntil: now - 1 }))
  t.same(await raw.keys('*'), [`test:${lookupKey('exact')}`], 'only the one within the bound')
})

test('keys are hashed: no tax id or document number in Redis keys', async (t) => {
  const { a, raw } = await replicas(t)
  await a.set(KEY, entry(Date.now()))
  // Besides the key each connection's health check writes (test:health), when it has run.
  const keys = (await raw.keys('*')).filter(key => key !== 'test:health')
  t.match(keys, [/^test:lookup:[\w-]{43}$/])
  t.notMatch(keys[0], /012345678901000/)
})

test('a value of another format is a miss, never an error', async (t) => {
  const { b, raw } = await replicas(t)
  const key = `test:${lookupKey(KEY)}`
  for (const value of ['{"v":1,"count":1,"upstreamStatus":200,"fetchedAt":1,"expiresAt":1,"staleUntil":99999999999999}\n[]', 'no header', '{"v":1}\n[]', 'not json\n[]', 'null\n[]', '[1]\n[]']) {
    await raw.set(key, value)
    t.equal(await b.get(KEY), undefined, JSON.stringify(value.slice(0, 12)))
  }
})

test('with Redis down, get is a miss and set does nothing, at once; when it is back, entries are shared again', async (t) => {
  const { server, a, b } = await replicas(t)
  await a.set(KEY, entry(Date.now()))
  await server.stop()
  t.equal(await b.get(KEY), undefined, 'a miss')
  const started = performance.now()
  await a.set(KEY, entry(Date.now()))
  t.equal(await b.get(KEY), undefined)
  const took = performance.now() - started
  t.ok(took < AT_ONCE_MS, `without waiting (${Math.round(took)} ms)`)

  await server.start()
  await until(async () => {
    await a.set(KEY, entry(Date.now()))
    return await b.get(KEY) !== undefined
  }, 3000, 'shared again')
  t.pass('shared again without a restart')
})
