import { Redis } from 'ioredis'
import { test } from 'tap'
import type { StoredResponse } from '../../src/state/types.ts'
import { isStateUnavailable } from '../../src/state/errors.ts'
import { createRedisIdempotencyStore, idempotencyKey, type RedisIdempotencyOptions } from '../../src/state/redis/idempotency.ts'
import { connect, startRedisServer, until, type LogLines } from './redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

const KEY = 'yard-app\nPOST\n/v1/bookings/:bookingRequestId/offers\noffer-1'
const RESPONSE: StoredResponse = {
  statusCode: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: '{"data":{"bookingRequestId":"BKG-1","note":"Truk B 1234 – ümlaut \\u2028"},"meta":{}}',
  upstreamStatus: 200
}

/** One Redis, and the store of two replicas, each with its own connection. */
async function replicas (t: Test, options: Partial<RedisIdempotencyOptions> = {}) {
  const server = await startRedisServer(t)
  const logs: LogLines = []
  const [ca, cb] = await Promise.all([connect(t, server, { logs }), connect(t, server)])
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  const settings = { ttlMs: 60_000, claimTtlMs: 5000, ...options }
  return {
    server,
    raw,
    logs,
    connections: [ca, cb],
    a: createRedisIdempotencyStore({ connection: ca, ...settings }),
    b: createRedisIdempotencyStore({ connection: cb, ...settings })
  }
}

test('the same key on A then B replays the stored answer byte for byte', async (t) => {
  const { a, b } = await replicas(t)
  t.same(await a.begin(KEY, 'fp-1'), { state: 'acquired' })
  await a.complete(KEY, RESPONSE)
  const replay = await b.begin(KEY, 'fp-1')
  t.same(replay, { state: 'completed', response: RESPONSE })
  t.equal(replay.state === 'completed' && replay.response.body, RESPONSE.body, 'the body, byte for byte')

  const { upstreamStatus: _, ...withoutStatus } = RESPONSE
  t.same(await b.begin(`${KEY}-2`, 'fp-2'), { state: 'acquired' })
  await b.complete(`${KEY}-2`, withoutStatus)
  t.same(await a.begin(`${KEY}-2`, 'fp-2'), { state: 'completed', response: withoutStatus }, 'no upstreamStatus stays none')
})

test('concurrent claims on A and B: exactly one acquires, the other waits and replays once it completes', async (t) => {
  const { a, b } = await replicas(t)
  const keys = Array.from({ length: 20 }, (_, i) => `${KEY}-${i}`)
  for (const key of keys) {
    const begun = await Promise.all([a.begin(key, 'fp'), b.begin(key, 'fp')])
    const winners = begun.filter(result => result.state === 'acquired')
    t.equal(winners.length, 1, `${key.slice(-4)}: one acquirer`)
    const owner = begun[0]?.state === 'acquired' ? a : b
    const waiter = owner === a ? b : a
    const waiting = begun.find(result => result.state === 'in-flight')
    if (waiting?.state !== 'in-flight') throw new Error('the other claim is not in flight')

    let settledAt = 0
    const settled = waiting.settled.then(() => { settledAt = performance.now() })
    const completedAt = performance.now()
    await owner.complete(key, { ...RESPONSE, body: key })
    await settled
    t.ok(settledAt - completedAt < 300, `settled ${Math.round(settledAt - completedAt)} ms after the answer`)
    t.same(await waiter.begin(key, 'fp'), { state: 'completed', response: { ...RESPONSE, body: key } }, 'then replays it')
  }
})

test('a released claim can be claimed again, on the other replica too', async (t) => {
  const { a, b } = await replicas(t)
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  const waiting = await b.begin(KEY, 'fp')
  t.equal(waiting.state, 'in-flight')
  await a.release(KEY)
  if (waiting.state === 'in-flight') await waiting.settled
  t.same(await b.begin(KEY, 'fp'), { state: 'acquired' }, 'B claims it')
  await b.complete(KEY, RESPONSE)
  t.same(await a.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE })
})

test('the same key with another request is a mismatch, in flight and completed', async (t) => {
  const { a, b } = await replicas(t)
  await a.begin(KEY, 'fp-1')
  t.same(await b.begin(KEY, 'fp-2'), { state: 'mismatch' }, 'in flight')
  await a.complete(KEY, RESPONSE)
  t.same(await b.begin(KEY, 'fp-2'), { state: 'mismatch' }, 'completed')
  t.same(await b.begin(KEY, 'fp-1'), { state: 'completed', response: RESPONSE }, 'the first request still replays')
})

test('the claim of a replica that crashed expires after claimTtlMs, and the key can be claimed again', async (t) => {
  const { a, b, connections } = await replicas(t, { claimTtlMs: 250 })
  const claimedAt = performance.now()
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  await connections[0]?.close() // A is gone without completing or releasing
  // As the plugin does: wait while in flight, then ask again.
  let begun = await b.begin(KEY, 'fp')
  t.equal(begun.state, 'in-flight')
  while (begun.state === 'in-flight') {
    await begun.settled
    begun = await b.begin(KEY, 'fp')
  }
  const waited = performance.now() - claimedAt
  t.same(begun, { state: 'acquired' }, 'B claims it')
  t.ok(waited >= 240 && waited < 1500, `once the claim expired (${Math.round(waited)} ms)`)
})

test('a wait for a claim held elsewhere is bounded by waitMs; the caller then asks again', async (t) => {
  const { a, b } = await replicas(t, { waitMs: 150 })
  await a.begin(KEY, 'fp')
  const started = performance.now()
  const waiting = await b.begin(KEY, 'fp')
  if (waiting.state !== 'in-flight') throw new Error(`expected in flight, got ${waiting.state}`)
  await waiting.settled
  const waited = performance.now() - started
  t.ok(waited >= 140 && waited < 400, `settled after waitMs (${Math.round(waited)} ms)`)
  t.equal((await b.begin(KEY, 'fp')).state, 'in-flight', 'still in flight: the caller waits again')
})

test('with Redis stopped, begin rejects STATE_UNAVAILABLE at once; when it is back, claims work again', async (t) => {
  const { server, a, connections } = await replicas(t)
  await server.stop()
  for (const when of ['as the connection drops', 'once it is known down']) {
    const started = performance.now()
    const error = await a.begin(KEY, 'fp').catch((reason: unknown) => reason)
    t.ok(isStateUnavailable(error), `${when}: STATE_UNAVAILABLE`)
    t.match(error, { code: 'STATE_UNAVAILABLE', message: 'the idempotency store (Redis) did not answer' })
    t.ok(performance.now() - started < 50, `without waiting (${Math.round(performance.now() - started)} ms)`)
    await until(() => connections[0]?.health() === 'down', 2000, 'down')
  }
  await server.start()
  t.equal(await connections[0]?.whenUp(3000), true)
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
})

test('an answer that could not be stored while Redis was down is stored once it is back', async (t) => {
  const { server, a, b, logs } = await replicas(t)
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  // The hub call is under way; Redis restarts meanwhile, losing the claim (persistence is off).
  await server.stop()
  const started = performance.now()
  await a.complete(KEY, RESPONSE)
  t.ok(performance.now() - started < 50, `complete() does not hold the answer back (${Math.round(performance.now() - started)} ms)`)
  t.ok(logs.some(line => line.msg === 'idempotency: complete failed; retrying while the claim lasts'), 'the failure is logged')
  await server.start()
  // Asking B now would claim the empty key itself: wait for A's retry instead.
  await until(() => logs.some(line => line.msg === 'idempotency: complete succeeded on a retry'), 3000, 'stored by a retry')
  t.same(await b.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE }, 'a retry of the write replays instead of reaching the hub again')
})

test('a replica that outlived its claim neither overwrites nor releases the request that claimed the key after it', async (t) => {
  const { a, b } = await replicas(t, { claimTtlMs: 150 })
  for (const late of ['complete', 'release'] as const) {
    const key = `${KEY}-${late}`
    t.same(await a.begin(key, 'fp'), { state: 'acquired' })
    await until(async () => (await b.begin(key, 'fp')).state === 'acquired', 2000, 'B claims the expired key')
    if (late === 'complete') await a.complete(key, { ...RESPONSE, body: 'from A, too late' })
    else await a.release(key)
    t.equal((await a.begin(key, 'fp')).state, 'in-flight', `${late}: B still holds its claim`)
    await b.complete(key, RESPONSE)
    t.same(await a.begin(key, 'fp'), { state: 'completed', response: RESPONSE }, `${late}: B's answer is the one kept`)
  }
})

test('an answer is kept for ttlMs', async (t) => {
  const { a, raw } = await replicas(t, { ttlMs: 60_000 })
  await a.begin(KEY, 'fp')
  const claimTtl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(claimTtl > 4000 && claimTtl <= 5000, `a claim lives claimTtlMs (${claimTtl} ms)`)
  await a.complete(KEY, RESPONSE)
  const ttl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(ttl > 59_000 && ttl <= 60_000, `an answer lives ttlMs (${ttl} ms)`)
})

test('a value this version cannot read is refused (STATE_UNAVAILABLE), never guessed at', async (t) => {
  const { a, raw } = await replicas(t)
  for (const value of ['{"v":2,"state":"completed","fingerprint":"fp"}', 'not json', 'null', '{"v":1,"state":"unknown","fingerprint":"fp"}', '{"v":1,"state":"completed","fingerprint":"fp"}']) {
    await raw.set(`test:${idempotencyKey(KEY)}`, value)
    await t.rejects(a.begin(KEY, 'fp'), { code: 'STATE_UNAVAILABLE' }, value)
  }
})

test('keys are hashed, and size() counts the keys held, in flight or completed, by all replicas', async (t) => {
  const { a, b, raw } = await replicas(t)
  await raw.set('test:lookup:other', 'not counted')
  await a.begin(KEY, 'fp')
  await b.begin(`${KEY}-2`, 'fp')
  await b.complete(`${KEY}-2`, RESPONSE)
  t.equal(await a.size(), 2)
  t.equal(await b.size(), 2)
  const keys = (await raw.keys('test:idempotency:*')).sort()
  t.same(keys, [`test:${idempotencyKey(KEY)}`, `test:${idempotencyKey(`${KEY}-2`)}`].sort())
  t.match(keys, [/^test:idempotency:[\w-]{43}$/, /^test:idempotency:[\w-]{43}$/])
})
