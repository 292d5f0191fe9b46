import { Redis } from 'ioredis'
import { test } from 'tap'
import { isStateUnavailable, type IdempotencyStore, type StoredResponse } from '../../src/state/types.ts'
import { createRedisIdempotencyStore, idempotencyKey, type RedisIdempotencyOptions } from '../../src/state/redis/idempotency.ts'
import { acquire } from '../helper.ts'
import { AT_ONCE_MS, connect, startRedisServer, until, type LogLines } from './redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

const KEY = 'yard-app\nPOST\n/v1/bookings/:bookingRequestId/offers\noffer-1'
const RESPONSE: StoredResponse = {
  statusCode: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: '{"data":{"bookingRequestId":"BKG-1","note":"Truk B 1234 – ümlaut \\u2028"},"meta":{}}',
  upstreamStatus: 200
}

/**
 * A lease for the tests that wait one out: seconds, so that the steps before it ends (claim,
 * mark, ask on the other replica) fit in it on a loaded machine.
 */
const SHORT_LEASE_MS = 2000

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
  const claim = await acquire(a, KEY, 'fp-1')
  await claim.sending()
  await claim.complete(RESPONSE)
  const replay = await b.begin(KEY, 'fp-1')
  t.same(replay, { state: 'completed', response: RESPONSE })
  t.equal(replay.state === 'completed' && replay.response.body, RESPONSE.body, 'the body, byte for byte')

  const { upstreamStatus: _, ...withoutStatus } = RESPONSE
  await (await acquire(b, `${KEY}-2`, 'fp-2')).complete(withoutStatus)
  t.same(await a.begin(`${KEY}-2`, 'fp-2'), { state: 'completed', response: withoutStatus }, 'no upstreamStatus stays none')
})

test('concurrent claims on A and B: exactly one acquires, the other waits and replays once it completes', async (t) => {
  const { a, b } = await replicas(t)
  const keys = Array.from({ length: 20 }, (_, i) => `${KEY}-${i}`)
  for (const key of keys) {
    const begun = await Promise.all([a.begin(key, 'fp'), b.begin(key, 'fp')])
    const winners = begun.filter(result => result.state === 'acquired')
    t.equal(winners.length, 1, `${key.slice(-4)}: one acquirer`)
    const waiter = begun[0]?.state === 'acquired' ? b : a
    const waiting = begun.find(result => result.state === 'in-flight')
    const owner = winners[0]
    if (waiting?.state !== 'in-flight' || owner?.state !== 'acquired') throw new Error('no claim')

    let settledAt = 0
    const settled = waiting.settled.then(() => { settledAt = performance.now() })
    const completedAt = performance.now()
    await owner.claim.sending()
    await owner.claim.complete({ ...RESPONSE, body: key })
    await settled
    t.ok(settledAt >= completedAt, 'the waiter is woken by the answer')
    t.same(await waiter.begin(key, 'fp'), { state: 'completed', response: { ...RESPONSE, body: key } }, 'then replays it')
  }
})

test('a released claim can be claimed again, on the other replica too', async (t) => {
  const { a, b } = await replicas(t)
  const claim = await acquire(a, KEY, 'fp')
  const waiting = await b.begin(KEY, 'fp')
  t.equal(waiting.state, 'in-flight')
  await claim.release()
  if (waiting.state === 'in-flight') await waiting.settled
  await (await acquire(b, KEY, 'fp')).complete(RESPONSE)
  const answered = { state: 'completed', response: RESPONSE }
  t.same(await a.begin(KEY, 'fp'), answered, 'B claimed it and answered')
  await claim.release()
  t.same(await a.begin(KEY, 'fp'), answered, 'a second release changes nothing')
})

test('the same key with another request is a mismatch, in flight and completed', async (t) => {
  const { a, b } = await replicas(t)
  const claim = await acquire(a, KEY, 'fp-1')
  t.same(await b.begin(KEY, 'fp-2'), { state: 'mismatch' }, 'claimed')
  await claim.sending()
  t.same(await b.begin(KEY, 'fp-2'), { state: 'mismatch' }, 'being sent')
  await claim.complete(RESPONSE)
  t.same(await b.begin(KEY, 'fp-2'), { state: 'mismatch' }, 'completed')
  t.same(await b.begin(KEY, 'fp-1'), { state: 'completed', response: RESPONSE }, 'the first request still replays')
})

/** As the plugin does: wait while in flight, then ask again. */
async function settledBegin (store: IdempotencyStore, key: string, fingerprint: string) {
  let begun = await store.begin(key, fingerprint)
  while (begun.state === 'in-flight') {
    await begun.settled
    begun = await store.begin(key, fingerprint)
  }
  return begun
}

test('a claim whose owner died before sending is free after its lease', async (t) => {
  const { a, b, connections } = await replicas(t, { claimTtlMs: SHORT_LEASE_MS })
  await acquire(a, KEY, 'fp')
  await connections[0]?.close() // A is gone without sending, settling or releasing
  t.equal((await b.begin(KEY, 'fp')).state, 'in-flight', 'B waits while the lease lasts')
  t.match(await settledBegin(b, KEY, 'fp'), { state: 'acquired' }, 'then claims it: none was sent')
})

test('a key whose owner died while sending is unknown after its lease, for good', async (t) => {
  const { a, b, connections, raw } = await replicas(t, { claimTtlMs: SHORT_LEASE_MS })
  const claim = await acquire(a, KEY, 'fp')
  await claim.sending()
  await connections[0]?.close() // A is gone with its write at the hub
  t.equal((await b.begin(KEY, 'fp')).state, 'in-flight', 'B waits while the lease lasts')
  t.same(await settledBegin(b, KEY, 'fp'), { state: 'unknown' }, 'then hears unknown')
  t.same(await b.begin(KEY, 'fp'), { state: 'unknown' }, 'and later still')
  t.same(await b.begin(KEY, 'fp-other'), { state: 'mismatch' }, 'another request with the key is still a mismatch')
  const written = JSON.parse(await raw.get(`test:${idempotencyKey(KEY)}`) ?? '{}') as unknown
  t.match(written, { v: 2, state: 'unknown', fingerprint: 'fp' }, 'written so')
  const ttl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(ttl > 50_000, `kept as long as the key lives (${ttl} ms)`)
})

test('an abandoned claim is unknown at once, on every replica, for as long as the key lives; a waiter learns it too', async (t) => {
  const { a, b, raw } = await replicas(t, { ttlMs: 60_000 })
  const claim = await acquire(a, KEY, 'fp')
  await claim.sending()
  const waiting = await b.begin(KEY, 'fp')
  if (waiting.state !== 'in-flight') throw new Error(`expected in flight, got ${waiting.state}`)
  await claim.abandon()
  await waiting.settled
  t.same(await b.begin(KEY, 'fp'), { state: 'unknown' })
  t.same(await a.begin(KEY, 'fp'), { state: 'unknown' })
  const ttl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(ttl > 59_000 && ttl <= 60_000, `kept ttlMs (${ttl} ms)`)
})

test('a late answer is kept until someone is told unknown, never after', async (t) => {
  const { a, b, logs } = await replicas(t, { claimTtlMs: SHORT_LEASE_MS })
  const quiet = await acquire(a, KEY, 'fp')
  await quiet.sending()
  await new Promise(resolve => setTimeout(resolve, SHORT_LEASE_MS + 100))
  await quiet.complete(RESPONSE)
  const answered = { state: 'completed', response: RESPONSE }
  t.same(await b.begin(KEY, 'fp'), answered, 'nobody asked meanwhile: the answer')

  for (const late of ['complete', 'release'] as const) {
    const key = `${KEY}-told-${late}`
    const claim = await acquire(a, key, 'fp')
    await claim.sending()
    await new Promise(resolve => setTimeout(resolve, SHORT_LEASE_MS + 100))
    t.same(await b.begin(key, 'fp'), { state: 'unknown' }, `${late}: past the lease, unknown`)
    if (late === 'complete') await claim.complete(RESPONSE)
    else await claim.release()
    t.same(await b.begin(key, 'fp'), { state: 'unknown' }, `${late}: then it changes nothing`)
  }
  const late = 'idempotency: complete found the key no longer this request\'s'
  t.ok(logs.some(line => String(line.msg).startsWith(late)), 'logged')
})

test('a claim written by a gateway of the previous format (v1) is waited for until it expires, then claimed as before', async (t) => {
  const { a, raw } = await replicas(t)
  const v1 = JSON.stringify({ v: 1, state: 'in-flight', fingerprint: 'fp', owner: 'old' })
  await raw.set(`test:${idempotencyKey(KEY)}`, v1, 'PX', SHORT_LEASE_MS)
  const begun = await a.begin(KEY, 'fp')
  if (begun.state !== 'in-flight') throw new Error(`expected in flight, got ${begun.state}`)
  await begun.settled
  t.match(await a.begin(KEY, 'fp'), { state: 'acquired' })
  await raw.set(`test:${idempotencyKey(`${KEY}-v1`)}`, JSON.stringify({ v: 1, state: 'completed', fingerprint: 'fp', response: RESPONSE }))
  t.same(await a.begin(`${KEY}-v1`, 'fp'), { state: 'completed', response: RESPONSE }, 'its answers are replayed')
})

test('a claim of format 2 is waited for until its lease, then unknown as before', async (t) => {
  const { a, raw } = await replicas(t)
  const leaseUntil = Date.now() + 200
  const v2 = JSON.stringify({ v: 2, state: 'in-flight', fingerprint: 'fp', owner: 'o', leaseUntil })
  await raw.set(`test:${idempotencyKey(KEY)}`, v2, 'PX', 60_000)
  t.same(await settledBegin(a, KEY, 'fp'), { state: 'unknown' })
  const unknown = JSON.stringify({ v: 2, state: 'unknown', fingerprint: 'fp' })
  await raw.set(`test:${idempotencyKey(`${KEY}-v2`)}`, unknown)
  t.same(await a.begin(`${KEY}-v2`, 'fp'), { state: 'unknown' }, 'its unknown outcomes are kept')
})

test('a wait for a claim held elsewhere is bounded by waitMs; the caller then asks again', async (t) => {
  // A lease of 30 s: a wait bounded by it instead of waitMs would take that long.
  const { a, b } = await replicas(t, { waitMs: 150, claimTtlMs: 30_000 })
  await a.begin(KEY, 'fp')
  const started = performance.now()
  const waiting = await b.begin(KEY, 'fp')
  if (waiting.state !== 'in-flight') throw new Error(`expected in flight, got ${waiting.state}`)
  await waiting.settled
  const waited = performance.now() - started
  t.ok(waited >= 140 && waited < 10_000, `settled after waitMs (${Math.round(waited)} ms)`)
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
    const took = performance.now() - started
    t.ok(took < AT_ONCE_MS, `without waiting (${Math.round(took)} ms)`)
    await until(() => connections[0]?.health() === 'down', 2000, 'down')
  }
  await server.start()
  t.equal(await connections[0]?.whenUp(3000), true)
  t.match(await a.begin(KEY, 'fp'), { state: 'acquired' })
})

test('outcomes not stored while Redis was down are stored as soon as it is back', async (t) => {
  const { server, a, b, logs, connections } = await replicas(t)
  const flushes: number[] = []
  a.onFlush?.((ms) => flushes.push(ms))
  const claims = [await acquire(a, KEY, 'fp'), await acquire(a, `${KEY}-2`, 'fp')]
  for (const claim of claims) await claim.sending()
  // The hub calls are under way; Redis restarts meanwhile, losing the claims (persistence is off).
  await server.stop()
  const started = performance.now()
  await claims[0]?.complete(RESPONSE)
  const took = performance.now() - started
  t.ok(took < AT_ONCE_MS, `complete() does not hold the answer back (${Math.round(took)} ms)`)
  await claims[1]?.abandon()
  const failed = 'idempotency: complete failed; it waits for Redis'
  t.ok(logs.some(line => line.msg === failed), 'the failure is logged')
  t.equal(a.pending(), 2, 'and counted')
  await server.start()
  // Asking B now could claim the empty key itself: wait for A's flush instead.
  await until(() => flushes.length === 1, 5000, 'flushed')
  t.equal(a.pending(), 0, 'everything waiting was written once Redis answered again')
  const stored = 'idempotency: the outcomes waiting for Redis are stored'
  t.ok(logs.some(line => line.msg === stored), 'and said so')
  t.equal(await connections[1]?.whenUp(5000), true, 'B back too')
  t.same(await b.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE }, 'a retry of the write replays instead of reaching the hub again')
  t.same(await b.begin(`${KEY}-2`, 'fp'), { state: 'unknown' }, 'an unknown outcome is kept too')
})

test('an answer a full Redis refused waits for room, then is stored', async (t) => {
  const { a, b, raw, connections } = await replicas(t)
  const claim = await acquire(a, KEY, 'fp')
  await claim.sending()
  await raw.config('SET', 'maxmemory', '1')
  t.teardown(() => raw.config('SET', 'maxmemory', '0'))
  await claim.complete(RESPONSE)
  t.equal(a.pending(), 1, 'not stored: pending')
  t.equal(connections[0]?.health(), 'refusing-writes', 'the refusal shows in health at once')
  await until(() => connections[1]?.health() === 'refusing-writes', 2000, 'the other replica\'s health check sees it too')
  await t.rejects(b.begin(`${KEY}-new`, 'fp'), { code: 'STATE_UNAVAILABLE' }, 'no new claim meanwhile')
  await raw.config('SET', 'maxmemory', '0')
  await until(() => a.pending() === 0, 5000, 'stored once Redis takes writes again')
  await until(() => connections[1]?.health() === 'up', 5000, 'B takes writes again too')
  t.same(await b.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE })
})

test('a claim whose command failed is freed in the background: a frozen Redis that runs it late leaves the key free', async (t) => {
  const { server, a, b, raw } = await replicas(t)
  server.pause()
  await t.rejects(a.begin(KEY, 'fp'), { code: 'STATE_UNAVAILABLE' }, 'the claim times out')
  server.resume()
  await until(async () => await raw.exists(`test:${idempotencyKey(KEY)}`) === 0, 3000, 'the late claim freed')
  await until(() => a.pending() === 0, 3000)
  t.match(await b.begin(KEY, 'fp'), { state: 'acquired' }, 'a retry claims it: nothing was sent')
})

test('a replica whose claim Redis lost neither overwrites nor releases the request that claimed the key after it', async (t) => {
  const { a, b, raw } = await replicas(t)
  for (const late of ['complete', 'release', 'abandon', 'sending'] as const) {
    const key = `${KEY}-${late}`
    const first = await acquire(a, key, 'fp')
    if (late !== 'sending') await first.sending()
    await raw.del(`test:${idempotencyKey(key)}`) // lost: a restart without persistence, a failover
    const second = await acquire(b, key, 'fp')
    if (late === 'complete') await first.complete({ ...RESPONSE, body: 'from A, too late' })
    else if (late === 'release') await first.release()
    else if (late === 'abandon') await first.abandon()
    else await t.rejects(first.sending(), { code: 'STATE_UNAVAILABLE' }, 'sending: refused')
    t.equal((await a.begin(key, 'fp')).state, 'in-flight', `${late}: B still holds its claim`)
    await second.complete(RESPONSE)
    t.same(await a.begin(key, 'fp'), { state: 'completed', response: RESPONSE }, `${late}: B's answer is the one kept`)
  }
})

test('a claim lives its lease, a key being sent and an answer ttlMs', async (t) => {
  const { a, raw } = await replicas(t, { ttlMs: 60_000 })
  const claim = await acquire(a, KEY, 'fp')
  const key = `test:${idempotencyKey(KEY)}`
  const claimTtl = await raw.pttl(key)
  t.ok(claimTtl > 0 && claimTtl <= 5000, `a claim lives its lease (${claimTtl} ms)`)
  const token = /^[0-9a-f-]{36}$/
  const claimed = JSON.parse(await raw.get(key) ?? '{}') as unknown
  t.match(claimed, { v: 3, state: 'claimed', fingerprint: 'fp', token })
  const [seconds, micros] = await raw.time()
  await claim.sending()
  const sending = JSON.parse(await raw.get(key) ?? '{}') as Record<string, unknown>
  t.match(sending, { v: 3, state: 'sending', fingerprint: 'fp', token })
  const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  t.ok(Number(sending.leaseUntil) >= redisNow + 5000, 'its lease: claimTtlMs on, by Redis\'s clock')
  const sendingTtl = await raw.pttl(key)
  t.ok(sendingTtl > 59_000 && sendingTtl <= 60_000, `a key being sent: ttlMs (${sendingTtl} ms)`)
  await claim.complete(RESPONSE)
  const ttl = await raw.pttl(key)
  t.ok(ttl > 59_000 && ttl <= 60_000, `an answer lives ttlMs (${ttl} ms)`)
})

test('a value this version cannot read is refused (STATE_UNAVAILABLE), never guessed at', async (t) => {
  const { a, raw } = await replicas(t)
  for (const value of ['{"v":2,"state":"completed","fingerprint":"fp"}', 'not json', 'null', '{"v":1,"state":"unknown","fingerprint":"fp"}', '{"v":1,"state":"completed","fingerprint":"fp"}',
    '{"v":2,"state":"in-flight","fingerprint":"fp"}',
    '{"v":3,"state":"unknown","fingerprint":"fp"}', '{"v":2,"state":"unknown"}',
    '{"v":3,"state":"claimed","fingerprint":"fp"}',
    '{"v":3,"state":"sending","fingerprint":"fp","token":"t"}']) {
    await raw.set(`test:${idempotencyKey(KEY)}`, value)
    await t.rejects(a.begin(KEY, 'fp'), { code: 'STATE_UNAVAILABLE' }, value)
  }
})

test('keys are hashed, and size() counts the keys held, in flight or completed, by all replicas', async (t) => {
  const { a, b, raw } = await replicas(t)
  await raw.set('test:lookup:other', 'not counted')
  await a.begin(KEY, 'fp')
  await (await acquire(b, `${KEY}-2`, 'fp')).complete(RESPONSE)
  t.equal(await a.size(), 2)
  t.equal(await b.size(), 2)
  const keys = (await raw.keys('test:idempotency:*')).sort()
  t.same(keys, [`test:${idempotencyKey(KEY)}`, `test:${idempotencyKey(`${KEY}-2`)}`].sort())
  t.match(keys, [/^test:idempotency:[\w-]{43}$/, /^test:idempotency:[\w-]{43}$/])
})

// With a replica in sync, a write is sent only once the replica holds its sending mark too
// (WAIT); a replica that stops acknowledging refuses them, then is no longer waited for.
test('with a replica in sync, a write is sent once it holds the mark (WAIT)', async (t) => {
  const master = await startRedisServer(t)
  const replica = await startRedisServer(t, { args: ['--replicaof', '127.0.0.1', String(master.port)] })
  const connection = await connect(t, master, { replicaMemoryMs: 1000 })
  const store = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000, replicaAckTimeoutMs: 100 })
  const onReplica = new Redis(replica.url)
  t.teardown(() => onReplica.disconnect())
  await until(() => connection.replicas() === 1, 10_000, 'the master reports its replica in sync')

  // On a busy machine a replica may miss even the first ack timeout: that write is
  // refused (as below), never sent unacknowledged.
  let acknowledged: string | undefined
  for (let i = 0; i < 20 && acknowledged === undefined; i++) {
    const key = i === 0 ? KEY : `${KEY}-w${i}`
    const claim = await acquire(store, key, 'fp')
    const sent = await claim.sending().then(() => true, (error) => !isStateUnavailable(error))
    if (!sent) {
      await claim.release()
      continue
    }
    acknowledged = key
  }
  t.ok(acknowledged !== undefined, 'a sending mark was acknowledged by the replica')
  const onIt = await onReplica.get(`test:${idempotencyKey(acknowledged ?? KEY)}`)
  const held = JSON.parse(onIt ?? '{}') as { state?: string }
  t.equal(held.state, 'sending', 'the replica holds the mark when sending() returns')

  replica.pause()
  const started = performance.now()
  const claim = await acquire(store, `${KEY}-2`, 'fp')
  const refused = await claim.sending().catch((error: unknown) => error)
  t.match(refused, { code: 'STATE_UNAVAILABLE', message: 'the idempotency claim did not reach the Redis replicas in time' }, 'refused: a failover could lose it')
  // The message is the ack timeout's; the bound says it did not wait for the connection's own timeouts or hang.
  t.ok(performance.now() - started < 2000, `after the ack timeout (${Math.round(performance.now() - started)} ms)`)
  await claim.release()
  const masterClient = new Redis(master.url)
  t.teardown(() => masterClient.disconnect())
  const freed = await masterClient.exists(`test:${idempotencyKey(`${KEY}-2`)}`)
  t.equal(freed, 0, 'the unsent write\'s key is freed')
  t.equal(store.pending(), 1, 'the release waits for the replica: written again until it has it')

  await until(() => connection.replicas() === 0, 10_000, 'a replica that has not acknowledged for seconds is no longer counted, once it has been gone replicaMemoryMs')
  await until(() => store.pending() === 0, 5000, 'then taken')
  const later = await acquire(store, `${KEY}-3`, 'fp')
  await t.resolves(later.sending(), 'then writes go on without it')
  replica.resume()
  await until(() => connection.replicas() === 1, 10_000, 'counted again once it catches up')
})

test('an outcome is not written to a master a replica in sync just left: it waits', async (t) => {
  // The old master of a Sentinel failover: what it takes now, the promoted replica lacks.
  const master = await startRedisServer(t)
  const args = ['--replicaof', '127.0.0.1', String(master.port)]
  const replicas = [await startRedisServer(t, { args }), await startRedisServer(t, { args })]
  const connection = await connect(t, master, { replicaMemoryMs: 60_000 })
  const store = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000 })
  await until(() => connection.replicas() === 2, 10_000, 'both replicas in sync')
  const claim = await acquire(store, KEY, 'fp')
  await claim.sending()
  const promoted = new Redis(replicas[0]!.url)
  t.teardown(() => promoted.disconnect())
  await promoted.call('REPLICAOF', 'NO', 'ONE')
  const direct = new Redis(master.url)
  t.teardown(() => direct.disconnect())
  const left = async () => (await direct.info('replication')).includes('connected_slaves:1')
  await until(left, 5000, 'the master sees one replica left')
  await claim.complete(RESPONSE)
  t.equal(store.pending(), 1, 'the answer waits')
  const held = await direct.get(`test:${idempotencyKey(KEY)}`)
  t.match(JSON.parse(held ?? '{}'), { state: 'sending' }, 'the old master did not take it')
})

// What the remaining replicas alone hold is not enough while one that left is still counted.
test('a replica that left the master is still waited for a while', async (t) => {
  // What a Sentinel failover looks like from the old master: the promoted replica stops taking its writes first.
  const master = await startRedisServer(t)
  const replicas = [await startRedisServer(t, { args: ['--replicaof', '127.0.0.1', String(master.port)] }), await startRedisServer(t, { args: ['--replicaof', '127.0.0.1', String(master.port)] })]
  const connection = await connect(t, master, { replicaMemoryMs: 60_000 })
  const store = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000, replicaAckTimeoutMs: 100 })
  await until(() => connection.replicas() === 2, 10_000, 'both replicas in sync')
  const promoted = new Redis(replicas[0]!.url)
  t.teardown(() => promoted.disconnect())
  await promoted.call('REPLICAOF', 'NO', 'ONE')
  const direct = new Redis(master.url)
  t.teardown(() => direct.disconnect())
  await until(async () => (await direct.info('replication')).includes('connected_slaves:1'), 5000, 'the master sees one replica left')
  await new Promise(resolve => setTimeout(resolve, 300)) // a health check or more since
  t.equal(connection.replicas(), 2, 'still counted')
  const claim = await acquire(store, KEY, 'fp')
  await t.rejects(claim.sending(), { code: 'STATE_UNAVAILABLE' },
    'the remaining replica alone does not make a write safe to send')
})
