import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { test } from 'tap'
import WebSocket from 'ws'
import { mayView, publicEvent } from '../../src/plugins/events.ts'
import { BookedEventSchema } from '../../src/schemas/events.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, until } from '../helpers/helper.ts'

async function listen (t: Parameters<Parameters<typeof test>[0]>[0]) {
  const built = await build(t)
  await built.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = built.app.server.address() as { port: number }
  return { ...built, base: `127.0.0.1:${port}` }
}

function connect (url: string, options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  const socket = new WebSocket(url, options)
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket))
    socket.once('error', reject)
  })
}

test('every connected client receives the booked notification after a successful booked ' +
  'POST', async (t) => {
  const { app, base } = await listen(t)
  const sockets = await Promise.all([
    connect(`ws://${base}/v1/events`),
    connect(`ws://${base}/v1/events`)
  ])
  t.teardown(() => {
    for (const s of sockets) s.terminate()
  })
  const received = sockets.map((s) => once(s, 'message'))

  const res = await fetch(`http://${base}/v1/bookings/${F.bookingRequestId}/booked`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'evt-1' },
    body: JSON.stringify({ booked: true, note: 'Truck B 1234 XYZ' })
  })
  t.equal(res.status, 200)
  const answer = (await res.json()) as { data: Record<string, unknown> }
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ strict: true, allErrors: true })
  addFormats.default(ajv)
  const validEvent = ajv.compile(JSON.parse(JSON.stringify(BookedEventSchema)) as object)
  for (const message of await Promise.all(received)) {
    const event = JSON.parse(String(message[0]))
    t.ok(
      validEvent(event),
      `the message is a BookedEvent as documented ${JSON.stringify(validEvent.errors)}`
    )
    t.equal(event.type, 'booking.booked')
    t.equal(event.requestId, 'evt-1')
    t.same(event.data, {
      bookingRequestId: F.bookingRequestId,
      booked: true,
      note: 'Truck B 1234 XYZ'
    })
    t.match(event.occurredAt, /^\d{4}-\d{2}-\d{2}T/)
    const { upstreamMessage, ...booking } = answer.data
    t.same(
      booking,
      event.data,
      'the answer describes the booking with the same names and forms as the event'
    )
    t.type(upstreamMessage, 'string', "plus the hub's own text")
  }
  t.equal(app.events.size, 2)
})

test('the message is the BookedEvent schema that the OpenAPI document publishes for the ' +
  'route', async (t) => {
  const doc = JSON.parse(
    await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')
  )
  t.same(doc.paths['/v1/events'].get['x-websocket-message'].oneOf[0], {
    $ref: '#/components/schemas/BookedEvent'
  })
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  const validate = ajv.compile(doc.components.schemas.BookedEvent)

  const { base } = await listen(t)
  const socket = await connect(`ws://${base}/v1/events`)
  t.teardown(() => socket.terminate())
  for (const body of [{ booked: true, note: 'Truck B 1234 XYZ' }, { booked: false }]) {
    const next = once(socket, 'message')
    const res = await fetch(`http://${base}/v1/bookings/${F.bookingRequestId}/booked`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
    t.equal(res.status, 200)
    const event = JSON.parse(String((await next)[0]))
    t.ok(validate(event), `${JSON.stringify(event)} matches: ${ajv.errorsText(validate.errors)}`)
  }
})

test('a failed booked POST sends no event', async (t) => {
  const { base } = await listen(t)
  const socket = await connect(`ws://${base}/v1/events`)
  t.teardown(() => socket.terminate())
  const messages: unknown[] = []
  socket.on('message', m => messages.push(m))
  const res = await fetch(`http://${base}/v1/bookings/SBX-500/booked`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ booked: true })
  })
  t.equal(res.status, 502)
  // A successful one afterwards arrives, and is the only message.
  const next = once(socket, 'message')
  await fetch(`http://${base}/v1/bookings/${F.bookingRequestId}/booked`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ booked: true })
  })
  await next
  t.equal(messages.length, 1)
})

test('a plain GET of the event route answers 426 in the envelope', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/v1/events' })
  t.equal(res.statusCode, 426)
  t.equal(res.json().code, 'UPGRADE_REQUIRED')
})

test('closing the gateway closes sockets with 1001 going away', async (t) => {
  const { app, base } = await listen(t)
  const socket = await connect(`ws://${base}/v1/events`)
  const closed = once(socket, 'close')
  await app.close()
  const [code] = await closed
  t.equal(code, 1001)
})

// --- who sees which event, and the limits ------------------------------------------------

const WRITER_A = {
  name: 'yard-a',
  key: 'key-yard-a',
  scopes: ['bookings:write' as const, 'events:read' as const]
}
const WRITER_B = {
  name: 'yard-b',
  key: 'key-yard-b',
  scopes: ['bookings:write' as const, 'events:read' as const]
}
const MONITOR = {
  name: 'monitor',
  key: 'key-monitor',
  scopes: ['events:read' as const],
  events: 'all' as const
}

async function listenWith (
  t: Parameters<Parameters<typeof test>[0]>[0],
  options: Parameters<typeof build>[1]
) {
  const built = await build(t, options)
  await built.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = built.app.server.address() as { port: number }
  return { ...built, base: `127.0.0.1:${port}` }
}

function connectAs (
  base: string,
  key: string,
  options: WebSocket.ClientOptions = {}
): Promise<WebSocket> {
  return connect(`ws://${base}/v1/events`, {
    ...options,
    headers: { authorization: `Bearer ${key}` }
  })
}

/** The answer to an upgrade: the socket, or the status and envelope it was refused with. */
function upgrade (
  base: string,
  key: string
): Promise<{ socket?: WebSocket; status: number; code?: string; retryAfter?: string }> {
  const socket = new WebSocket(`ws://${base}/v1/events`, {
    headers: { authorization: `Bearer ${key}` }
  })
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket, status: 101 }))
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      response.on('end', () => {
        resolve({
          status: response.statusCode ?? 0,
          code: (JSON.parse(body) as { code: string }).code,
          retryAfter: String(response.headers['retry-after'])
        })
        socket.terminate()
      })
    })
    socket.once('error', reject)
  })
}

test('a client sees the events of its own writes; one allowed "events": "all" sees every one; ' +
  'the payload does not name the client', async (t) => {
  const { base } = await listenWith(t, { clients: [WRITER_A, WRITER_B, MONITOR] })
  const [a, b, monitor] = await Promise.all([
    connectAs(base, WRITER_A.key),
    connectAs(base, WRITER_B.key),
    connectAs(base, MONITOR.key)
  ])
  t.teardown(() => {
    for (const s of [a, b, monitor]) s.terminate()
  })
  const received = new Map<WebSocket, Array<Record<string, unknown>>>([
    [a, []],
    [b, []],
    [monitor, []]
  ])
  for (const [socket, list] of received) {
    socket.on('message', (m) => list.push(JSON.parse(String(m)) as Record<string, unknown>))
  }

  for (const [writer, id] of [
    [WRITER_A, 'BKG-20240301-0001'],
    [WRITER_B, 'BKG-20240301-0002']
  ] as const) {
    const res = await fetch(`http://${base}/v1/bookings/${id}/booked`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ booked: true, note: writer.name })
    })
    t.equal(res.status, 200)
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  const notes = (socket: WebSocket) =>
    received.get(socket)!.map((e) => (e.data as { note: string }).note)
  t.same(notes(a), ['yard-a'], 'A sees its own booking only')
  t.same(notes(b), ['yard-b'], 'B sees its own booking only')
  t.same(notes(monitor), ['yard-a', 'yard-b'], 'the monitor sees both')
  t.same(
    Object.keys(received.get(monitor)![0]!).sort(),
    ['data', 'id', 'occurredAt', 'requestId', 'type'],
    'the posting client is not in the payload'
  )
})

test('the event carries its client internally, and the filter reads it from there', async (t) => {
  const event = {
    id: 'c0ffee00-0000-4000-8000-000000000001',
    type: 'booking.booked' as const,
    occurredAt: '2024-03-01T00:00:00.000Z',
    requestId: 'r',
    client: 'yard-a',
    data: { bookingRequestId: 'B', booked: true, note: '' }
  }
  t.ok(mayView({ name: 'yard-a', events: 'own' }, event))
  t.notOk(mayView({ name: 'yard-b', events: 'own' }, event))
  t.ok(mayView({ name: 'yard-b', events: 'all' }, event))
  t.ok(mayView(null, event), 'authentication off: everyone sees everything')
  t.notOk(
    mayView({ name: 'yard-a', events: 'own' }, { ...event, client: null }),
    'an event of no client is for those who see all'
  )
  t.notOk(publicEvent(event).includes('yard-a'))
})

test('sockets per client and in all are capped: refused in the envelope before the ' +
  'upgrade', async (t) => {
  const { app, base } = await listenWith(t, {
    clients: [WRITER_A, WRITER_B, MONITOR],
    env: { EVENTS_MAX_PER_CLIENT: '2', EVENTS_MAX_CONNECTIONS: '3' }
  })
  const first = await upgrade(base, WRITER_A.key)
  const second = await upgrade(base, WRITER_A.key)
  t.teardown(() => {
    first.socket?.terminate()
    second.socket?.terminate()
  })
  t.same([first.status, second.status], [101, 101])
  const third = await upgrade(base, WRITER_A.key)
  t.same(
    third,
    { status: 429, code: 'RATE_LIMITED', retryAfter: '10' },
    'a third from the same client'
  )
  const other = await upgrade(base, WRITER_B.key)
  t.teardown(() => other.socket?.terminate())
  t.equal(other.status, 101, 'another client still may')
  t.same(
    await upgrade(base, MONITOR.key),
    { status: 503, code: 'OVERLOADED', retryAfter: '10' },
    'past EVENTS_MAX_CONNECTIONS in all'
  )
  t.equal(app.events.size, 3)
  // A closed socket frees its place.
  const closed = once(first.socket!, 'close')
  first.socket!.close()
  await closed
  await new Promise((resolve) => setTimeout(resolve, 50))
  const again = await upgrade(base, WRITER_A.key)
  t.teardown(() => again.socket?.terminate())
  t.equal(again.status, 101)
})

test('upgrades racing past the check are closed with 1013; the cap holds', async (t) => {
  const { app, base } = await listenWith(t, {
    clients: [WRITER_A],
    env: { EVENTS_MAX_PER_CLIENT: '2' }
  })
  const attempts = await Promise.all(Array.from({ length: 12 }, () => upgrade(base, WRITER_A.key)))
  const opened = attempts.filter(a => a.socket !== undefined).map(a => a.socket!)
  t.teardown(() => { for (const s of opened) s.terminate() })
  t.ok(
    attempts.every((a) => a.status === 101 || (a.status === 429 && a.code === 'RATE_LIMITED')),
    'each either upgraded or was refused in the envelope'
  )
  const codes = await Promise.all(
    opened.map((socket) =>
      Promise.race([
        once(socket, 'close').then(([code]) => code as number),
        new Promise<number>((resolve) => setTimeout(() => resolve(0), 300))
      ])
    )
  )
  t.equal(codes.filter(code => code === 0).length, 2, 'two stay open')
  t.ok(
    codes.filter((code) => code !== 0).every((code) => code === 1013),
    `the others are closed with 1013 (${codes.join(', ')})`
  )
  t.equal(app.events.size, 2)
})

test('a socket that does not answer pings is ended; one that does stays', async (t) => {
  // Pings of a second: shorter, a busy machine can hold the answering socket's pong past one
  // interval, and it is ended as designed.
  const { app, base } = await listenWith(t, { env: { EVENTS_PING_INTERVAL_MS: '1000' } })
  const silent = await connect(`ws://${base}/v1/events`, { autoPong: false })
  const alive = await connect(`ws://${base}/v1/events`)
  t.teardown(() => { silent.terminate(); alive.terminate() })
  const [code] = await once(silent, 'close', { signal: AbortSignal.timeout(60_000) }) as [number]
  t.equal(code, 1006, 'ended without a close handshake')
  await new Promise(resolve => setTimeout(resolve, 2500))
  t.equal(
    alive.readyState,
    WebSocket.OPEN,
    'the answering socket is still open after several pings'
  )
  t.equal(app.events.size, 1)
})

test('a subscriber that does not read is closed with 1008 once EVENTS_MAX_BUFFERED_BYTES wait ' +
  'for it', async (t) => {
  const { app, base } = await listenWith(t, {
    env: { EVENTS_MAX_BUFFERED_BYTES: String(64 * 1024) }
  })
  const slow = await connect(`ws://${base}/v1/events`)
  const reader = await connect(`ws://${base}/v1/events`)
  t.teardown(() => {
    slow.terminate()
    reader.terminate()
  })
  let read = 0
  let slowRead = 0
  reader.on('message', () => {
    read++
  })
  slow.on('message', () => {
    slowRead++
  })
  slow.pause() // reads nothing from here on
  const note = 'x'.repeat(10_000)
  // 30 MB: more than the kernel's buffers on loopback hold, so the gateway's own queue passes the
  // limit. Four at a time (40 KB), each batch once the reader has the one before: the reader, in
  // this same process, never has more than that waiting, however loaded the machine (with 50 at a
  // time, 500 KB, it once fell behind the 64 KiB bound itself and was closed as slow: 478 of 3000).
  const published = 3000
  for (let n = 0; n < published;) {
    for (let i = 0; i < 4; i++) {
      app.events.publish({
        type: 'booking.booked',
        occurredAt: new Date().toISOString(),
        requestId: `r${n++}`,
        client: null,
        data: { bookingRequestId: 'B', booked: true, note }
      })
    }
    await until(() => read >= n || reader.readyState !== WebSocket.OPEN, 10_000)
  }
  const closed = once(slow, 'close', { signal: AbortSignal.timeout(10_000) })
  slow.resume()
  const [code, reason] = (await closed) as [number, Buffer]
  t.equal(code, 1008)
  t.match(String(reason), /too slow/)
  t.ok(slowRead < published, `the slow one got ${slowRead} of ${published} before it was closed`)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(read, published, 'the reading subscriber got every event')
  t.equal(reader.readyState, WebSocket.OPEN)
  t.equal(app.events.size, 1)
})
