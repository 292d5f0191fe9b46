import { Redis } from 'ioredis'
import { test } from 'tap'
import { isStateUnavailable, type StoredResponse } from '../../src/state/types.ts'
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

test('the claim of a replica that died mid-write is never claimed again: past its lease the key is unknown', async (t) => {
  const { a, b, connections } = await replicas(t, { claimTtlMs: 250 })
  const claimedAt = performance.now()
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  await connections[0]?.close() // A is gone without completing or releasing: its write may be at the hub
  // As the plugin does: wait while in flight, then ask again.
  let begun = await b.begin(KEY, 'fp')
  t.equal(begun.state, 'in-flight')
  while (begun.state === 'in-flight') {
    await begun.settled
    begun = await b.begin(KEY, 'fp')
  }
  const waited = performance.now() - claimedAt
  t.same(begun, { state: 'unknown' }, 'B does not claim it')
  t.ok(waited >= 240 && waited < 1500, `once the lease passed (${Math.round(waited)} ms)`)
  await new Promise(resolve => setTimeout(resolve, 300))
  t.same(await b.begin(KEY, 'fp'), { state: 'unknown' }, 'and later still')
  t.same(await b.begin(KEY, 'fp-other'), { state: 'mismatch' }, 'another request with the key is still a mismatch')
})

test('an abandoned claim is unknown at once, on every replica, for as long as the key lives; a waiter learns it too', async (t) => {
  const { a, b, raw } = await replicas(t, { ttlMs: 60_000 })
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  const waiting = await b.begin(KEY, 'fp')
  if (waiting.state !== 'in-flight') throw new Error(`expected in flight, got ${waiting.state}`)
  const started = performance.now()
  await a.abandon(KEY)
  await waiting.settled
  t.ok(performance.now() - started < 300, 'the waiter is woken')
  t.same(await b.begin(KEY, 'fp'), { state: 'unknown' })
  t.same(await a.begin(KEY, 'fp'), { state: 'unknown' })
  const ttl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(ttl > 59_000 && ttl <= 60_000, `kept ttlMs (${ttl} ms)`)
})

test('an owner that outlived its lease still settles its key: later retries replay its answer', async (t) => {
  const { a, b } = await replicas(t, { claimTtlMs: 150 })
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  await new Promise(resolve => setTimeout(resolve, 200))
  t.same(await b.begin(KEY, 'fp'), { state: 'unknown' }, 'past the lease, unknown')
  await a.complete(KEY, RESPONSE)
  t.same(await b.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE }, 'the answer, once it is there')
})

test('a claim written by a gateway of the previous format (v1) is waited for until it expires, then claimed as before', async (t) => {
  const { a, raw } = await replicas(t)
  await raw.set(`test:${idempotencyKey(KEY)}`, JSON.stringify({ v: 1, state: 'in-flight', fingerprint: 'fp', owner: 'old' }), 'PX', 200)
  const begun = await a.begin(KEY, 'fp')
  if (begun.state !== 'in-flight') throw new Error(`expected in flight, got ${begun.state}`)
  await begun.settled
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  await raw.set(`test:${idempotencyKey(`${KEY}-v1`)}`, JSON.stringify({ v: 1, state: 'completed', fingerprint: 'fp', response: RESPONSE }))
  t.same(await a.begin(`${KEY}-v1`, 'fp'), { state: 'completed', response: RESPONSE }, 'its answers are replayed')
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
  t.ok(logs.some(line => line.msg === 'idempotency: complete failed; retrying in the background'), 'the failure is logged')
  t.equal(a.pending(), 1, 'and counted')
  await server.start()
  // Asking B now would claim the empty key itself: wait for A's retry instead.
  await until(() => logs.some(line => line.msg === 'idempotency: complete succeeded on a retry'), 3000, 'stored by a retry')
  t.same(await b.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE }, 'a retry of the write replays instead of reaching the hub again')
  t.equal(a.pending(), 0)
})

test('an answer a full Redis refused (noeviction) is retried until it is stored; past the lease, retries hear unknown meanwhile', async (t) => {
  const { a, b, raw, logs, connections } = await replicas(t, { claimTtlMs: 300 })
  t.same(await a.begin(KEY, 'fp'), { state: 'acquired' })
  await raw.config('SET', 'maxmemory', '1')
  t.teardown(() => raw.config('SET', 'maxmemory', '0'))
  await a.complete(KEY, RESPONSE)
  t.equal(a.pending(), 1, 'not stored: pending')
  t.equal(connections[0]?.health(), 'refusing-writes', 'the refusal shows in health at once')
  await until(() => connections[1]?.health() === 'refusing-writes', 2000, 'the other replica\'s health check sees it too')
  await t.rejects(b.begin(`${KEY}-new`, 'fp'), { code: 'STATE_UNAVAILABLE' }, 'no new claim meanwhile')
  await until(() => logs.some(line => line.msg === 'idempotency: complete not stored within the claim\'s lease; retries of this write are answered OUTCOME_UNKNOWN until it is'), 3000, 'the lost lease reported')
  t.ok(logs.some(line => line.level === 50), 'as an error')
  await raw.config('SET', 'maxmemory', '0')
  await until(() => connections[1]?.health() === 'up', 2000, 'up once it takes writes again')
  t.same(await b.begin(KEY, 'fp'), { state: 'unknown' }, 'past the lease, before the retry lands: unknown, not sent again')
  await until(() => a.pending() === 0, 8000, 'stored by a retry')
  t.same(await b.begin(KEY, 'fp'), { state: 'completed', response: RESPONSE }, 'then the answer')
})

test('a claim whose command failed is freed in the background: a frozen Redis that runs it late leaves the key free', async (t) => {
  const { server, a, b, raw } = await replicas(t)
  server.pause()
  await t.rejects(a.begin(KEY, 'fp'), { code: 'STATE_UNAVAILABLE' }, 'the claim times out')
  server.resume()
  await until(async () => await raw.exists(`test:${idempotencyKey(KEY)}`) === 0, 3000, 'the late claim freed')
  await until(() => a.pending() === 0, 3000)
  t.same(await b.begin(KEY, 'fp'), { state: 'acquired' }, 'a retry claims it: nothing was sent')
})

test('a replica whose claim Redis lost neither overwrites nor releases the request that claimed the key after it', async (t) => {
  const { a, b, raw } = await replicas(t)
  for (const late of ['complete', 'release', 'abandon'] as const) {
    const key = `${KEY}-${late}`
    t.same(await a.begin(key, 'fp'), { state: 'acquired' })
    await raw.del(`test:${idempotencyKey(key)}`) // lost: a restart without persistence, a failover
    t.same(await b.begin(key, 'fp'), { state: 'acquired' }, 'B claims the empty key')
    if (late === 'complete') await a.complete(key, { ...RESPONSE, body: 'from A, too late' })
    else if (late === 'release') await a.release(key)
    else await a.abandon(key)
    t.equal((await a.begin(key, 'fp')).state, 'in-flight', `${late}: B still holds its claim`)
    await b.complete(key, RESPONSE)
    t.same(await a.begin(key, 'fp'), { state: 'completed', response: RESPONSE }, `${late}: B's answer is the one kept`)
  }
})

test('a claim and an answer are kept for ttlMs; the claim carries its lease', async (t) => {
  const { a, raw } = await replicas(t, { ttlMs: 60_000 })
  const before = Date.now()
  await a.begin(KEY, 'fp')
  const claimTtl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(claimTtl > 59_000 && claimTtl <= 60_000, `a claim lives ttlMs (${claimTtl} ms)`)
  const claim = JSON.parse(await raw.get(`test:${idempotencyKey(KEY)}`) ?? '{}') as Record<string, unknown>
  t.match(claim, { v: 2, state: 'in-flight', fingerprint: 'fp', owner: /^[0-9a-f-]{36}$/ })
  t.ok(Number(claim.leaseUntil) >= before + 5000 && Number(claim.leaseUntil) <= Date.now() + 5000, 'its lease: claimTtlMs from the claim')
  await a.complete(KEY, RESPONSE)
  const ttl = await raw.pttl(`test:${idempotencyKey(KEY)}`)
  t.ok(ttl > 59_000 && ttl <= 60_000, `an answer lives ttlMs (${ttl} ms)`)
})

test('a value this version cannot read is refused (STATE_UNAVAILABLE), never guessed at', async (t) => {
  const { a, raw } = await replicas(t)
  for (const value of ['{"v":2,"state":"completed","fingerprint":"fp"}', 'not json', 'null', '{"v":1,"state":"unknown","fingerprint":"fp"}', '{"v":1,"state":"completed","fingerprint":"fp"}',
    '{"v":2,"state":"in-flight","fingerprint":"fp"}', '{"v":3,"state":"unknown","fingerprint":"fp"}', '{"v":2,"state":"unknown"}']) {
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

test('with a replica in sync, a claim is used only once the replica holds it too (WAIT); a replica that stops acknowledging refuses claims, then is no longer waited for', async (t) => {
  const master = await startRedisServer(t)
  const replica = await startRedisServer(t, { args: ['--replicaof', '127.0.0.1', String(master.port)] })
  const connection = await connect(t, master, { replicaMemoryMs: 1000 })
  const store = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000, replicaAckTimeoutMs: 100 })
  const onReplica = new Redis(replica.url)
  t.teardown(() => onReplica.disconnect())
  await until(() => connection.replicas() === 1, 10_000, 'the master reports its replica in sync')

  // On a busy machine a replica may miss even the first ack timeout: that claim is refused (as below), never used unacknowledged.
  let acquired: string | undefined
  for (let i = 0; i < 20 && acquired === undefined; i++) {
    const key = i === 0 ? KEY : `${KEY}-w${i}`
    const begun = await store.begin(key, 'fp').catch((error: unknown) => error)
    if (isStateUnavailable(begun)) continue
    t.same(begun, { state: 'acquired' })
    acquired = key
  }
  t.ok(acquired !== undefined, 'a claim was acknowledged by the replica')
  t.ok(await onReplica.exists(`test:${idempotencyKey(acquired ?? KEY)}`), 'the replica holds the claim when begin() returns')

  replica.pause()
  const started = performance.now()
  const refused = await store.begin(`${KEY}-2`, 'fp').catch((error: unknown) => error)
  t.match(refused, { code: 'STATE_UNAVAILABLE', message: 'the idempotency claim did not reach the Redis replicas in time' }, 'refused: a failover could lose it')
  // The message is the ack timeout's; the bound says it did not wait for the connection's own timeouts or hang.
  t.ok(performance.now() - started < 2000, `after the ack timeout (${Math.round(performance.now() - started)} ms)`)
  const masterClient = new Redis(master.url)
  t.teardown(() => masterClient.disconnect())
  await until(async () => await masterClient.exists(`test:${idempotencyKey(`${KEY}-2`)}`) === 0, 2000, 'the unacknowledged claim is freed')

  await until(() => connection.replicas() === 0, 10_000, 'a replica that has not acknowledged for seconds is no longer counted, once it has been gone replicaMemoryMs')
  t.same(await store.begin(`${KEY}-3`, 'fp'), { state: 'acquired' }, 'then claims go on without it')
  replica.resume()
  await until(() => connection.replicas() === 1, 10_000, 'counted again once it catches up')
})

test('a replica that left the master is still waited for a while: a claim only the remaining replicas hold is refused', async (t) => {
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
  await t.rejects(store.begin(KEY, 'fp'), { code: 'STATE_UNAVAILABLE' }, 'the remaining replica alone does not make a claim safe')
})
