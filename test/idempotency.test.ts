import { once } from 'node:events'
import { test } from 'tap'
import WebSocket from 'ws'
import { canonicalJson, requestFingerprint } from '../src/idempotency/fingerprint.ts'
import { createMemoryIdempotencyStore } from '../src/state/memory/idempotency.ts'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { IDEMPOTENCY_KEY, textProblem } from '../src/schemas/formats.ts'
import { acquire, build, manualClock, until, type TestClient } from './helper.ts'

const CLIENTS: TestClient[] = [
  { name: 'yard-app', key: 'key-yard', scopes: ['bookings:write', 'sp2:finalize', 'events:read'] },
  { name: 'ops-app', key: 'key-ops', scopes: ['bookings:write'] }
]
const YARD = { authorization: 'Bearer key-yard' }
const OPS = { authorization: 'Bearer key-ops' }
const OFFERS = `/v1/bookings/${F.bookingRequestId}/offers`
const BOOKED = `/v1/bookings/${F.bookingRequestId}/booked`
const offer = { serviceOrderId: 'SO-1', price: 1250000.5, offeredAt: '2024-03-01T08:15:00+07:00' }

test('the same key and body within the window replays the first answer without calling the hub', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  const first = await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, 'idempotency-key': 'offer-1' } })
  t.equal(first.statusCode, 200)
  t.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is not a replay')
  t.equal(sandbox.count(), 1)

  // The same body with its keys in another order is the same request.
  const reordered = { offeredAt: offer.offeredAt, price: offer.price, serviceOrderId: offer.serviceOrderId }
  for (let i = 0; i < 3; i++) {
    const again = await app.inject({ method: 'POST', url: OFFERS, payload: reordered, headers: { ...YARD, 'idempotency-key': 'offer-1', 'x-request-id': `retry-${i}` } })
    t.equal(again.statusCode, 200)
    t.equal(again.headers['idempotent-replayed'], 'true')
    t.equal(again.body, first.body, 'the same body, byte for byte')
    t.equal(again.headers['content-type'], first.headers['content-type'])
    t.equal(again.headers['x-request-id'], `retry-${i}`, 'the replay has its own request id')
  }
  t.equal(sandbox.count(), 1, 'the hub was called once')

  const without = await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: YARD })
  t.equal(without.statusCode, 200)
  t.equal(sandbox.count(), 2, 'without a key every request reaches the hub')
})

test('the same key with a different request is 422 IDEMPOTENCY_KEY_REUSED, and the hub is not called', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  const headers = { ...YARD, 'idempotency-key': 'offer-2' }
  t.equal((await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers })).statusCode, 200)
  const cases: Array<[string, string, object]> = [
    ['another price', OFFERS, { ...offer, price: 1 }],
    // Another path is another booking: the same key there is the client's mistake too.
    ['another booking request', '/v1/bookings/BKG-OTHER-1/offers', offer]
  ]
  for (const [name, url, payload] of cases) {
    const res = await app.inject({ method: 'POST', url, payload, headers })
    t.equal(res.statusCode, 422, `${name}: status`)
    t.match(res.json(), { statusCode: 422, code: 'IDEMPOTENCY_KEY_REUSED', error: 'Unprocessable Entity', requestId: res.headers['x-request-id'] })
  }
  t.equal(sandbox.count(), 1, 'only the first reached the hub')
})

test('keys belong to a client and a route', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  const key = { 'idempotency-key': 'shared-key' }
  t.equal((await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, ...key } })).statusCode, 200)
  const other = await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...OPS, ...key } })
  t.equal(other.statusCode, 200)
  t.equal(other.headers['idempotent-replayed'], undefined, 'another client\'s key is its own')
  const booked = await app.inject({ method: 'POST', url: BOOKED, payload: { booked: true }, headers: { ...YARD, ...key } })
  t.equal(booked.statusCode, 200)
  t.equal(booked.headers['idempotent-replayed'], undefined, 'another route\'s key is its own')
  t.equal(sandbox.count(), 3)
})

test('concurrent requests with one key make one hub call; the others wait and replay it', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS, sandbox: { latencyMs: 300 } })
  const send = (key?: string) => app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, ...(key === undefined ? {} : { 'idempotency-key': key }) } })
  const answers = await Promise.all(Array.from({ length: 6 }, () => send('together')))
  t.same(answers.map(a => a.statusCode), [200, 200, 200, 200, 200, 200])
  t.equal(answers.filter(a => a.headers['idempotent-replayed'] === 'true').length, 5, 'five replays')
  t.equal(new Set(answers.map(a => a.body)).size, 1, 'one answer')
  t.equal(sandbox.count(), 1, 'the sandbox saw one call')

  sandbox.reset()
  await Promise.all(Array.from({ length: 6 }, () => send()))
  t.equal(sandbox.count(), 6, 'without a key, six calls (the check above can fail)')
})

test('a write the hub refused (4xx) frees its key: a retry with it reaches the hub again', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS, sandbox: { latencyMs: 200 } })
  const refused = '/v1/bookings/SBX-400/booked'
  const send = (key: string) => app.inject({ method: 'POST', url: refused, payload: { booked: true }, headers: { ...YARD, 'idempotency-key': key } })
  const first = await send('refused')
  t.equal(first.statusCode, 400)
  t.equal(first.json().code, 'UPSTREAM_REJECTED')
  const second = await send('refused')
  t.equal(second.statusCode, 400)
  t.equal(second.headers['idempotent-replayed'], undefined, 'a failure is never replayed')
  t.equal(sandbox.count(), 2, 'the hub did nothing the first time: the retry is sent')

  // Concurrent with a refusal: the waiter does not inherit it, it tries itself.
  sandbox.reset()
  const both = await Promise.all([0, 1].map(() => send('refused-together')))
  t.same(both.map(a => a.statusCode), [400, 400])
  t.equal(sandbox.count(), 2, 'one after the other')
  t.equal(await app.state.idempotency.size(), 0, 'nothing is kept of refusals')
})

test('a write that failed without reaching the hub (connection refused) frees its key', async (t) => {
  const { app } = await build(t, { clients: CLIENTS, env: { UPSTREAM_BASE_URL: 'http://127.0.0.1:9' } })
  const send = () => app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, 'idempotency-key': 'unreachable' } })
  const answers = [await send(), await send()]
  t.same(answers.map(a => a.json().code), ['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE'], 'tried again: nothing was sent the first time')
  t.equal(await app.state.idempotency.size(), 0)
})

test('a write that may have reached the hub without an answer is never sent again with its key: 409 OUTCOME_UNKNOWN', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS, sandbox: { latencyMs: 50 }, env: { UPSTREAM_DEADLINE_MS: '2000' } })
  const cases: Array<[string, string, number, string]> = [
    ['a hub 500', '/v1/bookings/SBX-500/booked', 502, 'UPSTREAM_UNAVAILABLE'],
    ['a hub 503', '/v1/bookings/SBX-503/booked', 503, 'UPSTREAM_UNAVAILABLE'],
    ['a connection reset after the request was sent', '/v1/bookings/SBX-RESET/booked', 502, 'UPSTREAM_UNAVAILABLE'],
    ['a hub slower than the deadline', '/v1/bookings/SBX-HANG/booked', 504, 'UPSTREAM_TIMEOUT'],
    ['a 2xx the gateway cannot read', '/v1/bookings/SBX-MALFORMED/booked', 502, 'UPSTREAM_BAD_RESPONSE']
  ]
  for (const [name, url, status, code] of cases) {
    sandbox.reset()
    const send = (key: string) => app.inject({ method: 'POST', url, payload: { booked: true }, headers: { ...YARD, 'idempotency-key': key.replaceAll(' ', '-') } })
    const first = await send(name)
    t.equal(first.statusCode, status, `${name}: the first answer says what happened`)
    t.equal(first.json().code, code)
    for (let i = 0; i < 2; i++) {
      const retry = await send(name)
      t.equal(retry.statusCode, 409, `${name}: a retry is 409`)
      t.match(retry.json(), { statusCode: 409, code: 'OUTCOME_UNKNOWN', error: 'Conflict', requestId: retry.headers['x-request-id'] })
      t.equal(retry.headers['idempotent-replayed'], undefined)
    }
    t.equal(sandbox.count(), 1, `${name}: the hub got it once`)
    t.equal((await send(`${name} (another key)`)).statusCode, status, `${name}: a new key is sent`)
  }

  // Waiting for a request that ends unknown: the waiter learns it too, and sends nothing.
  sandbox.reset()
  const both = await Promise.all([0, 1].map(() => app.inject({ method: 'POST', url: '/v1/bookings/SBX-500/booked', payload: { booked: true }, headers: { ...YARD, 'idempotency-key': 'unknown-together' } })))
  t.same(both.map(a => a.statusCode).sort(), [409, 502])
  t.equal(sandbox.count(), 1)
})

test('a caller that hangs up while waiting for another request with its key gets nothing sent', async (t) => {
  // The first request is refused by the hub after 5 s, which frees the key for the waiting one;
  // the second caller gives up after 1 s: seconds apart, whatever the machine's load.
  const { app, sandbox, logs } = await build(t, { clients: CLIENTS, sandbox: { latencyMs: 5000 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const url = `http://127.0.0.1:${port}/v1/bookings/SBX-400/booked`
  const init = { method: 'POST', headers: { ...YARD, 'content-type': 'application/json', 'idempotency-key': 'gone' }, body: JSON.stringify({ booked: true }) }
  const first = fetch(url, init)
  await until(() => sandbox.count() === 1)
  const waiting = fetch(url, { ...init, signal: AbortSignal.timeout(1000) })
    .catch((error: unknown) => error)
  t.equal((await first).status, 400)
  t.match(await waiting, { name: 'TimeoutError' }, 'the second caller gave up')
  await until(() => logs.some(line => line.audit === true && line.statusCode === 499))
  t.equal(sandbox.count(), 1, 'the waiting request was not sent once the key was free')
  t.match(logs.find(line => line.audit === true && line.statusCode === 499), { aborted: true, upstreamStatus: null }, 'its audit line says it was not sent')
  t.equal(await app.state.idempotency.size(), 0, 'and its key is free again')
})

test('Idempotency-Key must be 1-255 visible ASCII characters', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  for (const bad of ['x'.repeat(256), 'has space', 'tab\there', 'caf\u00e9']) {
    const res = await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, 'idempotency-key': bad } })
    t.equal(res.statusCode, 400, JSON.stringify(bad.slice(0, 20)))
    t.equal(res.json().code, 'VALIDATION_FAILED')
    // A control character is named, as in every text input; otherwise the format's rule.
    t.same(res.json().details, [{ field: 'header.idempotency-key', rule: textProblem(bad) ?? `must be ${IDEMPOTENCY_KEY.rule}` }], 'one rule, worded by the format')
  }
  t.equal(sandbox.count(), 0)
  t.equal((await app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, 'idempotency-key': '~'.repeat(255) } })).statusCode, 200, '255 is fine')
})

test('a finalization is idempotent too, and a booked replay publishes no second event', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  const final = `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`
  const a = await app.inject({ method: 'POST', url: final, headers: { ...YARD, 'idempotency-key': 'final-1' } })
  const b = await app.inject({ method: 'POST', url: final, headers: { ...YARD, 'idempotency-key': 'final-1' } })
  t.equal(a.statusCode, 200)
  t.equal(b.headers['idempotent-replayed'], 'true')
  t.equal(sandbox.count(), 1)

  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/events`, { headers: YARD })
  t.teardown(() => socket.terminate())
  await once(socket, 'open')
  const messages: Array<{ data: { note: string } }> = []
  socket.on('message', m => messages.push(JSON.parse(String(m)) as { data: { note: string } }))
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ method: 'POST', url: BOOKED, payload: { booked: true, note: 'once' }, headers: { ...YARD, 'idempotency-key': 'booked-1' } })
    t.equal(res.statusCode, 200)
  }
  // A later booking as a barrier: its event comes after any the replays could have sent on this socket.
  t.equal((await app.inject({ method: 'POST', url: BOOKED, payload: { booked: true, note: 'later' }, headers: YARD })).statusCode, 200)
  await until(() => messages.some(m => m.data.note === 'later'))
  t.equal(messages.filter(m => m.data.note === 'once').length, 1, 'one event for one booking')
})

test('after the window, a key is forgotten', async (t) => {
  const clock = manualClock()
  const { app, sandbox } = await build(t, { clients: CLIENTS, env: { IDEMPOTENCY_TTL_SECONDS: '1' }, clock: clock.now })
  const send = () => app.inject({ method: 'POST', url: OFFERS, payload: offer, headers: { ...YARD, 'idempotency-key': 'short' } })
  await send()
  t.equal((await send()).headers['idempotent-replayed'], 'true')
  clock.advance(1000)
  const later = await send()
  t.equal(later.headers['idempotent-replayed'], undefined)
  t.equal(sandbox.count(), 2)
})

test('the fingerprint ignores key order and nothing else', async (t) => {
  t.equal(canonicalJson({ b: 1, a: [{ d: 2, c: null }] }), '{"a":[{"c":null,"d":2}],"b":1}')
  t.equal(requestFingerprint({ id: 'A' }, { x: 1, y: 2 }), requestFingerprint({ id: 'A' }, { y: 2, x: 1 }))
  t.not(requestFingerprint({ id: 'A' }, { x: 1 }), requestFingerprint({ id: 'B' }, { x: 1 }))
  t.not(requestFingerprint({ id: 'A' }, { x: 1 }), requestFingerprint({ id: 'A' }, { x: '1' }))
  t.not(requestFingerprint({ id: 'A' }, undefined), requestFingerprint({ id: 'A' }, {}))
})

test('the fingerprint of any JSON value: keys sorted at every depth, no recursion', async (t) => {
  const fc = (await import('fast-check')).default
  // The plain recursive reading of "sorted keys", for values shallow enough to recurse.
  const reference = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`
    if (value !== null && typeof value === 'object') {
      return `{${Object.keys(value).sort().map(k => `${JSON.stringify(k)}:${reference((value as Record<string, unknown>)[k])}`).join(',')}}`
    }
    return JSON.stringify(value)
  }
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => canonicalJson(value) === reference(value)), { seed: 14, numRuns: 2000 })
  // 100,000 levels deep: the recursive form overflows the stack; this one does not.
  let deep: unknown = 1
  for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { z: deep, a: null }
  const text = canonicalJson(deep)
  t.ok(text.startsWith('{"a":null,"z":[{"a":null,"z":['), 'keys sorted at depth')
  t.ok(text.endsWith(`[1]${'}]'.repeat(49_999)}}`), 'closed at every depth')
  t.equal(canonicalJson(JSON.parse(text)), text, 'its own output is canonical')
})

test('memory store: states, expiry by its clock, and its bound', async (t) => {
  let now = 0
  const store = createMemoryIdempotencyStore({ ttlMs: 1000, maxEntries: 2, clock: () => now })
  const response = (body: string) => ({ statusCode: 200, headers: {}, body })

  const claim = await acquire(store, 'a', 'f1')
  const waiting = await store.begin('a', 'f1')
  t.equal(waiting.state, 'in-flight')
  t.same(await store.begin('a', 'f2'), { state: 'mismatch' }, 'a different request, even while in flight')
  await claim.sending()
  await claim.complete(response('A'))
  if (waiting.state === 'in-flight') await waiting.settled // resolves once completed
  t.same(await store.begin('a', 'f1'), { state: 'completed', response: response('A') })
  await claim.release()
  t.equal((await store.begin('a', 'f1')).state, 'completed', 'settled once: no late release')

  now = 999
  t.equal((await store.begin('a', 'f1')).state, 'completed', 'still within the TTL')
  now = 1000
  await (await acquire(store, 'a', 'f1')).release()
  t.match(await store.begin('a', 'f1'), { state: 'acquired' }, 'expired, then released: free again')

  const sent = await acquire(store, 'sent', 'f')
  await sent.sending()
  await sent.abandon()
  await sent.complete(response('late'))
  t.same(await store.begin('sent', 'f'), { state: 'unknown' }, 'unknown stays unknown')

  now = 2000
  for (const key of ['k1', 'k2', 'k3']) {
    await (await acquire(store, key, 'f')).complete(response(key))
  }
  t.equal(await store.size(), 3, 'bounded: the oldest answers forgotten (the key in flight kept)')
  t.match(await store.begin('k1', 'f'), { state: 'acquired' })
  t.equal((await store.begin('k3', 'f')).state, 'completed')

  const inFlight = createMemoryIdempotencyStore({ ttlMs: 1000, maxEntries: 1 })
  await inFlight.begin('busy', 'f')
  await (await acquire(inFlight, 'done-1', 'f')).complete(response('1'))
  await (await acquire(inFlight, 'done-2', 'f')).complete(response('2'))
  t.equal((await inFlight.begin('busy', 'f')).state, 'in-flight', 'a key in flight is never evicted')
  t.equal((await inFlight.begin('done-2', 'f')).state, 'completed')
  t.match(await inFlight.begin('done-1', 'f'), { state: 'acquired' })
})
