import { once } from 'node:events'
import { test } from 'tap'
import { Agent, EventSource } from 'undici'
import WebSocket from 'ws'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, until, type TestClient } from '../helpers/helper.ts'
import { startTcpProxy } from '../helpers/tcp-proxy.ts'

// Resuming readers of the event log (memory mode, one instance): WebSockets
// with ?lastEventId=, event streams (SSE) with Last-Event-ID, tickets for
// EventSource, and the window past which a reader is told to reload.

type Test = Parameters<Parameters<typeof test>[0]>[0]

const WRITER_A: TestClient = {
  name: 'yard-a',
  key: 'key-yard-a',
  scopes: ['bookings:write', 'events:read']
}
const WRITER_B: TestClient = {
  name: 'yard-b',
  key: 'key-yard-b',
  scopes: ['bookings:write', 'events:read']
}
const MONITOR: TestClient = {
  name: 'monitor',
  key: 'key-monitor',
  scopes: ['events:read'],
  events: 'all'
}
const NO_EVENTS: TestClient = { name: 'portal', key: 'key-portal', scopes: ['bookings:write'] }
const CLIENTS = [WRITER_A, WRITER_B, MONITOR, NO_EVENTS]
const ID = /^\d+-\d+$/

async function gateway (t: Test, env: Record<string, string> = {}) {
  const built = await build(t, { clients: CLIENTS, env })
  await built.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = built.app.server.address() as { port: number }
  const base = `127.0.0.1:${port}`
  /** A booked POST by `writer`, with `note`. */
  const book = async (writer: TestClient, note: string) => {
    const res = await fetch(`http://${base}/v1/bookings/${F.bookingRequestId}/booked`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ booked: true, note })
    })
    if (res.status !== 200) throw new Error(`booked POST answered ${res.status}`)
  }
  return { ...built, base, book }
}

interface Frame { id?: string, event?: string, data?: string, comment?: string }

/** An event stream read with fetch, as a non-browser client reads it: its frames, parsed. */
async function stream (t: Test, url: string, headers: Record<string, string>) {
  const controller = new AbortController()
  t.teardown(() => controller.abort())
  const res = await fetch(url, { headers, signal: controller.signal })
  const frames: Frame[] = []
  const reading = (async () => {
    if (res.body === null || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
      return
    }
    let buffer = ''
    const decoder = new TextDecoder()
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true })
        let end
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame: Frame = {}
          for (const line of buffer.slice(0, end).split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim()
            else {
              const colon = line.indexOf(':')
              const field = line.slice(0, colon) as 'id' | 'event' | 'data'
              frame[field] = line.slice(colon + 1).trimStart()
            }
          }
          frames.push(frame)
          buffer = buffer.slice(end + 2)
        }
      }
    } catch {}
  })()
  const events = () =>
    frames
      .filter((f) => f.event === 'booking.booked')
      .map((f) => JSON.parse(f.data!) as { id: string; data: { note: string } })
  return {
    res,
    frames,
    events,
    notes: () => events().map((e) => e.data.note),
    reading,
    close: () => controller.abort()
  }
}

/** A WebSocket as a resuming client opens it, with its messages parsed. */
async function socket (t: Test, base: string, key: string, lastEventId?: string) {
  const ws = new WebSocket(
    `ws://${base}/v1/events${lastEventId === undefined ? '' : `?lastEventId=${lastEventId}`}`,
    { headers: { authorization: `Bearer ${key}` } }
  )
  const messages: Array<{ type: string, id: string, reason?: string, data?: { note: string } }> = []
  ws.on('message', (m) => messages.push(JSON.parse(String(m))))
  await once(ws, 'open')
  t.teardown(() => ws.terminate())
  const notes = () => messages.filter(m => m.type === 'booking.booked').map(m => m.data!.note)
  return { ws, messages, notes }
}

test('a WebSocket that comes back with ?lastEventId gets what it missed, only what it may see, ' +
  'in order, then what follows', async (t) => {
  const { base, book } = await gateway(t)
  const first = await socket(t, base, WRITER_A.key, 'now')
  await until(() => first.messages.length === 1)
  t.match(
    first.messages[0],
    { type: 'stream.position', id: '0-0' },
    'told its position on connection'
  )
  await book(WRITER_A, 'a1')
  await until(() => first.notes().length === 1)
  const seen = first.messages.at(-1)!.id
  t.match(seen, ID)
  first.ws.terminate()

  await book(WRITER_A, 'a2')
  await book(WRITER_B, 'b1')
  await book(WRITER_A, 'a3')
  const again = await socket(t, base, WRITER_A.key, seen)
  await until(() => again.notes().length === 2)
  await book(WRITER_A, 'a4')
  await until(() => again.notes().length === 3)
  t.same(again.notes(), ['a2', 'a3', 'a4'], "the two it missed, not B's, then the new one")
  const ids = again.messages.filter((m) => m.type === 'booking.booked').map((m) => m.id)
  t.same(
    ids,
    [...ids].sort(
      (x, y) =>
        Number(x.split('-')[0]) - Number(y.split('-')[0]) ||
        Number(x.split('-')[1]) - Number(y.split('-')[1])
    ),
    'in id order'
  )
  t.notOk(ids.includes(seen), 'not the one it had')

  const monitor = await socket(t, base, MONITOR.key, seen)
  await until(() => monitor.notes().length === 4)
  t.same(monitor.notes(), ['a2', 'b1', 'a3', 'a4'], 'a client allowed every event gets every one')
})

test('a WebSocket without lastEventId gets booked events only, as the first version of the route ' +
  'sent them', async (t) => {
  // Pings of a second: a socket whose pong waits behind a busy event loop for longer than one
  // interval is ended, as designed, and this test is not about that.
  const { base, book, app } = await gateway(t, { EVENTS_PING_INTERVAL_MS: '1000' })
  const plain = await socket(t, base, WRITER_A.key)
  await book(WRITER_B, 'not mine')
  await book(WRITER_A, 'mine')
  await until(() => plain.messages.length === 1)
  await new Promise((resolve) => setTimeout(resolve, 1500))
  t.same(
    plain.messages.map((m) => m.type),
    ['booking.booked'],
    'no position nor reload messages, even with heartbeats passing'
  )
  t.equal(app.events.size, 1)
})

test('a reader that saw no event of its own is told the position with the heartbeat, and resumes ' +
  'from it', async (t) => {
  const { base, book } = await gateway(t, { EVENTS_PING_INTERVAL_MS: '1000' })
  const quiet = await socket(t, base, WRITER_B.key, 'now')
  await book(WRITER_A, 'a1')
  await until(() => quiet.messages.some((m) => m.type === 'stream.position' && m.id !== '0-0'))
  const position = quiet.messages.at(-1)!.id
  quiet.ws.terminate()
  await book(WRITER_B, 'b1')
  const again = await socket(t, base, WRITER_B.key, position)
  await until(() => again.notes().length === 1)
  t.same(again.notes(), ['b1'])
  t.notOk(
    again.messages.some((m) => m.type === 'stream.reload'),
    'nothing it missed was lost'
  )
})

test('a resume from an id older than the window is told to reload (stream.reload, expired), then ' +
  'gets what follows', async (t) => {
  const { base, book } = await gateway(t, { EVENTS_REPLAY_MAX: '2' })
  const first = await socket(t, base, WRITER_A.key, 'now')
  await book(WRITER_A, 'a1')
  await until(() => first.notes().length === 1)
  const seen = first.messages.at(-1)!.id
  first.ws.terminate()
  for (const note of ['a2', 'a3', 'a4']) await book(WRITER_A, note)

  const late = await socket(t, base, WRITER_A.key, seen)
  await until(() => late.messages.some((m) => m.type === 'stream.reload'))
  const [reload] = late.messages
  t.match(reload, { type: 'stream.reload', reason: 'expired' }, 'the first message says reload')
  t.match(reload?.id, ID)
  t.same(late.notes(), [], 'no partial replay')
  await book(WRITER_A, 'a5')
  await until(() => late.notes().length === 1)
  t.same(late.notes(), ['a5'])

  const unknown = await socket(t, base, WRITER_A.key, '1-0')
  await until(() => unknown.messages.length > 0)
  t.match(
    unknown.messages[0],
    { type: 'stream.reload', reason: 'expired' },
    "an id this log never gave out (a restarted gateway's) is the same"
  )
})

test('a lastEventId that is not an event id is refused before the upgrade, naming the ' +
  'parameter', async (t) => {
  const { app } = await gateway(t)
  const res = await app.inject({
    url: '/v1/events?lastEventId=abc',
    headers: { authorization: `Bearer ${WRITER_A.key}` }
  })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { code: 'VALIDATION_FAILED', details: [{ field: 'query.lastEventId' }] })
  const sse = await app.inject({
    url: '/v1/events/stream',
    headers: { authorization: `Bearer ${WRITER_A.key}`, 'last-event-id': '<script>' }
  })
  t.equal(sse.statusCode, 400)
  t.match(sse.json(), { code: 'VALIDATION_FAILED', details: [{ field: 'header.last-event-id' }] })
})

test("SSE: text/event-stream with typed events whose id is the event id, only the client's own, " +
  'and a resume with Last-Event-ID', async (t) => {
  const { base, book } = await gateway(t)
  const a = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${WRITER_A.key}`
  })
  t.equal(a.res.status, 200)
  t.equal(a.res.headers.get('content-type'), 'text/event-stream')
  t.equal(a.res.headers.get('cache-control'), 'no-cache')
  t.ok(a.res.headers.get('x-request-id'), 'the request id, as on every answer')
  await until(() => a.frames.length >= 1)
  t.same(a.frames[0], { id: '0-0' }, 'its position first: an id line without data')
  await book(WRITER_B, 'b1')
  await book(WRITER_A, 'a1')
  await until(() => a.events().length === 1)
  const frame = a.frames.find((f) => f.event === 'booking.booked')!
  const event = a.events()[0]!
  t.equal(frame.id, event.id, 'the SSE id is the event id')
  t.match(event, {
    type: 'booking.booked',
    data: { note: 'a1', booked: true, bookingRequestId: F.bookingRequestId }
  })
  a.close()

  await book(WRITER_A, 'a2')
  await book(WRITER_B, 'b2')
  const again = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${WRITER_A.key}`,
    'last-event-id': event.id
  })
  await until(() => again.events().length === 1)
  await book(WRITER_A, 'a3')
  await until(() => again.events().length === 2)
  t.same(again.notes(), ['a2', 'a3'], 'what it missed of its own, then what follows')
  const byQuery = await stream(t, `http://${base}/v1/events/stream?lastEventId=${event.id}`, {
    authorization: `Bearer ${MONITOR.key}`
  })
  await until(() => byQuery.events().length === 3)
  t.same(
    byQuery.notes(),
    ['a2', 'b2', 'a3'],
    'lastEventId in the query for a new EventSource; the monitor sees all'
  )
})

test('SSE: a resume beyond the window gets a stream.reload event', async (t) => {
  const { base, book } = await gateway(t, { EVENTS_REPLAY_MAX: '1' })
  await book(WRITER_A, 'a1')
  const first = await stream(t, `http://${base}/v1/events/stream?lastEventId=0-0`, {
    authorization: `Bearer ${WRITER_A.key}`
  })
  await until(() => first.events().length === 1)
  const seen = first.events()[0]!.id
  first.close()
  await book(WRITER_A, 'a2')
  await book(WRITER_A, 'a3')
  const late = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${WRITER_A.key}`,
    'last-event-id': seen
  })
  await until(() => late.frames.some(f => f.event === 'stream.reload'))
  const reload = late.frames.find(f => f.event === 'stream.reload')!
  t.match(JSON.parse(reload.data!), { type: 'stream.reload', reason: 'expired', id: reload.id })
  t.same(late.events(), [], 'nothing half-replayed')
})

test('SSE: heartbeat comments keep an idle stream alive; closing the gateway ends the ' +
  'stream', async (t) => {
  const { app, base } = await gateway(t, { EVENTS_PING_INTERVAL_MS: '50' })
  const idle = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${MONITOR.key}`
  })
  await until(() => idle.frames.filter((f) => f.comment === 'heartbeat').length >= 2)
  t.pass('heartbeat comment lines arrive while no event is sent')
  t.equal(app.events.size, 1)
  await app.close()
  await idle.reading
  t.pass('the stream ended with the gateway')
})

test('SSE: the same scope, and the same caps as the WebSockets, counted together', async (t) => {
  const { app, base } = await gateway(t, {
    EVENTS_MAX_PER_CLIENT: '2',
    EVENTS_MAX_CONNECTIONS: '3'
  })
  const none = await fetch(`http://${base}/v1/events/stream`)
  t.equal(none.status, 401)
  t.equal((await none.json() as { code: string }).code, 'UNAUTHORIZED')
  const forbidden = await fetch(`http://${base}/v1/events/stream`, {
    headers: { authorization: `Bearer ${NO_EVENTS.key}` }
  })
  t.equal(forbidden.status, 403)

  const ws = await socket(t, base, WRITER_A.key, 'now')
  const s1 = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${WRITER_A.key}`
  })
  t.equal(s1.res.status, 200)
  const s2 = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${WRITER_A.key}`
  })
  t.equal(s2.res.status, 429, 'a third reader of the same client (a socket and a stream before it)')
  t.equal((await s2.res.json() as { code: string }).code, 'RATE_LIMITED')
  t.equal(s2.res.headers.get('retry-after'), '10')
  const s3 = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${WRITER_B.key}`
  })
  t.equal(s3.res.status, 200)
  const s4 = await stream(t, `http://${base}/v1/events/stream`, {
    authorization: `Bearer ${MONITOR.key}`
  })
  t.equal(s4.res.status, 503, 'past EVENTS_MAX_CONNECTIONS in all')
  t.equal((await s4.res.json() as { code: string }).code, 'OVERLOADED')
  t.equal(app.events.size, 3)
  s1.close()
  await until(() => app.events.size === 2)
  ws.ws.terminate()
  await until(() => app.events.size === 1)
})

test('SSE: a stream that does not read is dropped once EVENTS_MAX_BUFFERED_BYTES wait for it, ' +
  'and counted', async (t) => {
  const { app, base } = await gateway(t, { EVENTS_MAX_BUFFERED_BYTES: String(64 * 1024) })
  const controller = new AbortController()
  t.teardown(() => controller.abort())
  // Never read: the body is left unconsumed, so the loopback buffers fill, then the gateway's.
  const slow = await fetch(`http://${base}/v1/events/stream`, {
    headers: { authorization: `Bearer ${MONITOR.key}` },
    signal: controller.signal
  })
  t.equal(slow.status, 200)
  const note = 'x'.repeat(10_000)
  let n = 0
  while (app.events.size > 0 && n < 5000) {
    for (let i = 0; i < 20; i++) {
      await app.events.publish({
        type: 'booking.booked',
        occurredAt: new Date().toISOString(),
        requestId: `r${n++}`,
        client: null,
        data: { bookingRequestId: 'B', booked: true, note }
      })
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.equal(app.events.size, 0, `dropped after ${n} events`)
  t.match(
    await app.inject({ url: '/metrics' }).then((r) => r.body),
    /^gateway_events_dropped_total 1$/m
  )
})

test('tickets: POST /v1/events/tickets, then EventSource opens the stream with ?ticket= once; ' +
  'the ticket is never logged', async (t) => {
  const { base, book, rawLogs } = await gateway(t)
  const issued = await fetch(`http://${base}/v1/events/tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${WRITER_A.key}` }
  })
  t.equal(issued.status, 200)
  const { data } = (await issued.json()) as { data: { ticket: string; expiresAt: string } }
  t.match(data.ticket, /^[A-Za-z0-9_-]{43}$/)
  const lifetime = Date.parse(data.expiresAt) - Date.now()
  t.ok(lifetime > 55_000 && lifetime <= 60_000, `expires in EVENTS_TICKET_SECONDS (${lifetime} ms)`)

  const source = new EventSource(`http://${base}/v1/events/stream?ticket=${data.ticket}`)
  t.teardown(() => source.close())
  const notes: string[] = []
  const ids: string[] = []
  source.addEventListener('booking.booked', (event) => {
    notes.push(
      (JSON.parse(String((event as MessageEvent).data)) as { data: { note: string } }).data.note
    )
    ids.push((event as MessageEvent).lastEventId)
  })
  await once(source, 'open')
  await book(WRITER_B, 'b1')
  await book(WRITER_A, 'a1')
  await until(() => notes.length === 1)
  t.same(notes, ['a1'], 'as the client the ticket was issued to: its own events only')
  t.match(ids[0], ID, 'EventSource keeps the id')

  const used = await fetch(`http://${base}/v1/events/stream?ticket=${data.ticket}`)
  t.equal(used.status, 401, 'single use')
  t.equal(
    (await fetch(`http://${base}/v1/events/stream?ticket=${'x'.repeat(43)}`)).status,
    401,
    'an unknown ticket'
  )
  t.equal(
    (await fetch(`http://${base}/v1/events/stream?ticket=short`)).status,
    401,
    'a malformed one never authenticates (then fails validation too)'
  )
  t.notOk(
    rawLogs.some((line) => line.includes(data.ticket)),
    'the ticket is in no log line'
  )
  t.ok(
    rawLogs.some((line) => line.includes('ticket=[redacted]')),
    'its parameter is logged redacted'
  )

  const refused = await fetch(`http://${base}/v1/events/tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${NO_EVENTS.key}` }
  })
  t.equal(refused.status, 403, 'a ticket needs events:read')
})

test('tickets expire after EVENTS_TICKET_SECONDS', async (t) => {
  const { base } = await gateway(t, { EVENTS_TICKET_SECONDS: '1' })
  const issued = await fetch(`http://${base}/v1/events/tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${WRITER_A.key}` }
  })
  const { data } = await issued.json() as { data: { ticket: string } }
  await new Promise(resolve => setTimeout(resolve, 1100))
  t.equal((await fetch(`http://${base}/v1/events/stream?ticket=${data.ticket}`)).status, 401)
})

test('EventSource resumes by itself: when the connection drops it reconnects with Last-Event-ID ' +
  'and gets what it missed, each event once', async (t) => {
  const { book, app } = await gateway(t)
  const proxy = await startTcpProxy(t, (app.server.address() as { port: number }).port)
  // A non-browser EventSource with the key in a header (undici's, through an interceptor
  // of its dispatcher): it reconnects to the same URL, where a ticket would be spent.
  const dispatcher = new Agent().compose(
    (dispatch) => (options, handler) =>
      dispatch(
        {
          ...options,
          headers: {
            ...(options.headers as Record<string, string>),
            authorization: `Bearer ${MONITOR.key}`
          }
        },
        handler
      )
  )
  t.teardown(() => dispatcher.close())
  const notes: string[] = []
  const source = new EventSource(`http://127.0.0.1:${proxy.port}/v1/events/stream`, {
    dispatcher,
    node: { reconnectionTime: 50 }
  })
  t.teardown(() => source.close())
  source.addEventListener('booking.booked', (event) =>
    notes.push(
      (JSON.parse(String((event as MessageEvent).data)) as { data: { note: string } }).data.note
    )
  )
  let opens = 0
  source.addEventListener('open', () => {
    opens++
  })
  await until(() => opens === 1)
  await book(WRITER_A, 'a1')
  await until(() => notes.length === 1)

  proxy.cut()
  await book(WRITER_B, 'b1')
  await book(WRITER_A, 'a2')
  await until(() => opens === 2)
  await book(WRITER_A, 'a3')
  await until(() => notes.length === 4)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(notes, ['a1', 'b1', 'a2', 'a3'], 'none missed, none twice')
})

test('without a key or a ticket the stream is refused with 401, and EventSource gives up, as ' +
  'browsers do', async (t) => {
  const { base } = await gateway(t)
  const source = new EventSource(`http://${base}/v1/events/stream`, {
    node: { reconnectionTime: 50 }
  })
  t.teardown(() => source.close())
  await once(source, 'error')
  t.equal(source.readyState, EventSource.CLOSED)
})
