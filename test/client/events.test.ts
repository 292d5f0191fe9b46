import { once } from 'node:events'
import type { IncomingMessage } from 'node:http'
import t from 'tap'
import WebSocket, { WebSocketServer } from 'ws'
import {
  createGatewayClient,
  subscribeEvents,
  type BookedEvent,
  type EventSocketError,
  type StreamReload
} from '../../clients/typescript/src/index.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { startTcpProxy } from '../helpers/tcp-proxy.ts'
import { listeningGateway } from './gateway.ts'

/** Collects what a subscription reports, with a way to wait for the next of each. */
function recorder () {
  const events: BookedEvent[] = []
  const errors: EventSocketError[] = []
  const reloads: StreamReload[] = []
  let opens = 0
  const waiters: Array<() => void> = []
  const changed = () => { for (const wake of waiters.splice(0)) wake() }
  /** Resolves once the condition holds (checked after every report). */
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise<void>(resolve => waiters.push(resolve))
  }
  return {
    events,
    errors,
    reloads,
    get opens () { return opens },
    until,
    onEvent (event: BookedEvent) { events.push(event); changed() },
    onError (error: EventSocketError) { errors.push(error); changed() },
    onOpen () { opens++; changed() },
    onReload (signal: StreamReload) { reloads.push(signal); changed() }
  }
}

t.test(
  'receives a booked event posted through the API, with the key as the bearer subprotocol and ' +
  'never in the URL',
  async (t) => {
    const gateway = await listeningGateway(t)
    const seen = recorder()
    const subscription = subscribeEvents({ baseUrl: gateway.baseUrl, apiKey: gateway.key, ...seen })
    t.teardown(() => subscription.unsubscribe())
    await seen.until(() => seen.opens === 1)

    const client = createGatewayClient({ baseUrl: gateway.baseUrl, apiKey: gateway.key })
    const booked = await client.POST('/v1/bookings/{bookingRequestId}/booked', {
      params: { path: { bookingRequestId: F.bookingRequestId } },
      body: { booked: true, note: 'Truck B 1234 XYZ' }
    })
    t.equal(booked.response.status, 200)
    await seen.until(() => seen.events.length === 1)
    const [event] = seen.events
    t.equal(event?.type, 'booking.booked')
    t.same(event?.data, {
      bookingRequestId: F.bookingRequestId,
      booked: true,
      note: 'Truck B 1234 XYZ'
    })
    t.equal(
      event?.requestId,
      booked.response.headers.get('x-request-id'),
      'the id of the POST that caused it'
    )
    t.same(seen.errors, [])

    const upgrade = gateway.logs.find(
      (line) => (line.req as { url?: string } | undefined)?.url?.startsWith('/v1/events') === true
    )
    t.equal(
      (upgrade?.req as { url?: string } | undefined)?.url,
      '/v1/events?lastEventId=now',
      "the socket's URL carries the route and where to resume from, never the key"
    )
    t.notOk(
      gateway.rawLogs.some((line) => line.includes(gateway.key)),
      'the key is in no log line'
    )
  }
)

t.test(
  "with ws's WebSocket class: the handshake offers bearer and the key, at <baseUrl>/v1/events",
  async (t) => {
    const server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      handleProtocols: (protocols) => (protocols.has('bearer') ? 'bearer' : false)
    })
    t.teardown(() => {
      for (const client of server.clients) client.terminate()
      server.close()
    })
    await once(server, 'listening')
    const { port } = server.address() as { port: number }
    const handshakes: IncomingMessage[] = []
    server.on('connection', (socket, request) => {
      handshakes.push(request)
      socket.send('not JSON')
      socket.send(JSON.stringify({ type: 'booking.cancelled', data: {} }))
      socket.send(
        JSON.stringify({
          type: 'booking.booked',
          occurredAt: '2024-03-01T01:15:00.000Z',
          requestId: 'r-1',
          data: { bookingRequestId: 'BKG-1', booked: true, note: '' }
        })
      )
    })

    const seen = recorder()
    const subscription = subscribeEvents({
      baseUrl: `http://127.0.0.1:${port}/customs-gateway/`,
      apiKey: 'cgw_abc-DEF_123',
      WebSocket,
      ...seen
    })
    t.teardown(() => subscription.unsubscribe())
    await seen.until(() => seen.events.length === 1)
    t.equal(
      handshakes[0]?.url,
      '/customs-gateway/v1/events?lastEventId=now',
      'a path in baseUrl is kept; the query says where to resume from'
    )
    t.same(handshakes[0]?.headers['sec-websocket-protocol']?.split(/, */), [
      'bearer',
      'cgw_abc-DEF_123'
    ])
    t.equal(seen.events[0]?.requestId, 'r-1', 'an event')
    t.equal(
      seen.errors.length,
      1,
      'the unreadable message is reported; an unknown event type is skipped'
    )
    t.match(seen.errors[0]?.message, /not a JSON event/)
    t.equal(seen.errors[0]?.retryInMs, undefined)
  }
)

t.test(
  'an unknown key is refused, reported, and retried with growing, jittered delays until ' +
  'unsubscribed',
  async (t) => {
    const gateway = await listeningGateway(t)
    const seen = recorder()
    const minDelayMs = 40
    const maxDelayMs = 160
    const subscription = subscribeEvents({
      baseUrl: gateway.baseUrl,
      apiKey: 'cgw_unknown',
      reconnect: { minDelayMs, maxDelayMs },
      ...seen
    })
    await seen.until(() => seen.errors.length === 5)
    subscription.unsubscribe()
    t.equal(seen.opens, 0)
    const ceilings = [40, 80, 160, 160, 160]
    seen.errors.forEach((error, i) => {
      const ceiling = ceilings[i] ?? maxDelayMs
      t.match(error.message, /could not connect/)
      t.equal(error.closeCode, 1006)
      t.ok(
        error.retryInMs !== undefined &&
          error.retryInMs >= ceiling / 2 &&
          error.retryInMs <= ceiling,
        `attempt ${i + 1}: ${error.retryInMs} ms within [${ceiling / 2}, ${ceiling}]`
      )
    })
    const refused = gateway.logs.filter((line) => line.msg === 'caller not authenticated')
    t.ok(refused.length >= 5, 'the gateway refused each attempt')
    await new Promise((resolve) => setTimeout(resolve, 2 * maxDelayMs))
    t.equal(seen.errors.length, 5, 'no attempt after unsubscribe')
    t.equal(
      gateway.logs.filter((line) => line.msg === 'caller not authenticated').length,
      refused.length
    )
  }
)

t.test(
  'with reconnect: false, the first close is reported once and ends the subscription',
  async (t) => {
    const gateway = await listeningGateway(t)
    const seen = recorder()
    subscribeEvents({ baseUrl: gateway.baseUrl, apiKey: 'cgw_unknown', reconnect: false, ...seen })
    const handshakes = () =>
      gateway.logs.filter(
        (line) =>
          line.msg === 'incoming request' && (line.req as { url?: string }).url === '/v1/events'
      ).length
    await seen.until(() => seen.errors.length === 1)
    t.match(seen.errors[0], {
      closeCode: 1006,
      retryInMs: undefined,
      message: 'The event socket could not connect to ' +
        `${gateway.baseUrl.replace('http:', 'ws:')}/v1/events`
    })
    const before = handshakes()
    await new Promise((resolve) => setTimeout(resolve, 700))
    t.equal(seen.errors.length, 1, 'nothing more reported')
    t.equal(handshakes(), before, 'no second attempt')
  }
)

t.test('reconnects when the gateway restarts, and events flow again', async (t) => {
  const first = await listeningGateway(t)
  const { port } = first.app.server.address() as { port: number }
  const seen = recorder()
  const subscription = subscribeEvents({
    baseUrl: first.baseUrl,
    apiKey: first.key,
    reconnect: { minDelayMs: 50, maxDelayMs: 200 },
    ...seen
  })
  t.teardown(() => subscription.unsubscribe())
  await seen.until(() => seen.opens === 1)

  await first.app.close()
  await seen.until(() => seen.errors.length >= 1)
  t.equal(seen.errors[0]?.closeCode, 1001, 'going away')
  t.match(
    seen.errors[0]?.message,
    /closed \(code 1001: gateway shutting down\); trying again in \d+ ms/
  )

  const second = await listeningGateway(t, { key: first.key, port })
  await seen.until(() => seen.opens === 2)
  const client = createGatewayClient({ baseUrl: second.baseUrl, apiKey: second.key })
  await client.POST('/v1/bookings/{bookingRequestId}/booked', {
    params: { path: { bookingRequestId: F.bookingRequestId } },
    body: { booked: true }
  })
  await seen.until(() => seen.events.length === 1)
  t.equal(seen.events[0]?.data.note, '')

  subscription.unsubscribe()
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(second.app.events.size, 0, 'unsubscribe closed the socket')
})

t.test('misses no event across a dropped connection, and sees none twice', async (t) => {
  const gateway = await listeningGateway(t)
  const proxy = await startTcpProxy(t, (gateway.app.server.address() as { port: number }).port)
  const seen = recorder()
  const subscription = subscribeEvents({
    baseUrl: `http://127.0.0.1:${proxy.port}`,
    apiKey: gateway.key,
    reconnect: { minDelayMs: 50, maxDelayMs: 200 },
    ...seen
  })
  t.teardown(() => subscription.unsubscribe())
  await seen.until(() => seen.opens === 1)
  const client = createGatewayClient({ baseUrl: gateway.baseUrl, apiKey: gateway.key })
  const book = async (note: string) => {
    const { response } = await client.POST('/v1/bookings/{bookingRequestId}/booked', {
      params: { path: { bookingRequestId: F.bookingRequestId } },
      body: { booked: true, note }
    })
    t.equal(response.status, 200)
  }
  await book('before')
  await seen.until(() => seen.events.length === 1)
  t.match(subscription.lastEventId, /^\d+-\d+$/, 'it remembers the last id')

  proxy.cut()
  await book('while closed 1')
  await book('while closed 2')
  await seen.until(() => seen.opens === 2)
  await book('after')
  await seen.until(() => seen.events.length === 4)
  await new Promise(resolve => setTimeout(resolve, 200))
  t.same(
    seen.events.map((e) => e.data.note),
    ['before', 'while closed 1', 'while closed 2', 'after'],
    'each once, in order'
  )
  t.equal(seen.errors[0]?.closeCode, 1006, 'the drop was reported')
  t.same(seen.reloads, [])
})

t.test(
  'a gateway restarted without its log (memory mode) says reload; events flow after it',
  async (t) => {
    const first = await listeningGateway(t)
    const { port } = first.app.server.address() as { port: number }
    const seen = recorder()
    const subscription = subscribeEvents({
      baseUrl: first.baseUrl,
      apiKey: first.key,
      reconnect: { minDelayMs: 50, maxDelayMs: 200 },
      ...seen
    })
    t.teardown(() => subscription.unsubscribe())
    await seen.until(() => seen.opens === 1)
    const book = (baseUrl: string, note: string) =>
      createGatewayClient({ baseUrl, apiKey: first.key }).POST(
        '/v1/bookings/{bookingRequestId}/booked',
        { params: { path: { bookingRequestId: F.bookingRequestId } }, body: { booked: true, note } }
      )
    await book(first.baseUrl, 'one')
    await seen.until(() => seen.events.length === 1)
    await first.app.close()
    const second = await listeningGateway(t, { key: first.key, port })
    await seen.until(() => seen.reloads.length === 1)
    t.match(seen.reloads[0], { type: 'stream.reload', reason: 'expired' })
    t.equal(
      subscription.lastEventId,
      seen.reloads[0]?.id,
      'it resumes from where the reload says next time'
    )
    await book(second.baseUrl, 'two')
    await seen.until(() => seen.events.length === 2)
    t.same(
      seen.events.map((e) => e.data.note),
      ['one', 'two']
    )
  }
)

t.test('starts from a lastEventId the page kept', async (t) => {
  const gateway = await listeningGateway(t)
  const client = createGatewayClient({ baseUrl: gateway.baseUrl, apiKey: gateway.key })
  for (const note of ['kept', 'missed']) {
    await client.POST('/v1/bookings/{bookingRequestId}/booked', {
      params: { path: { bookingRequestId: F.bookingRequestId } },
      body: { booked: true, note }
    })
  }
  const [kept] = (
    (await gateway.app.state.events.since('0-0')) as { entries: Array<{ id: string }> }
  ).entries
  const seen = recorder()
  const subscription = subscribeEvents({
    baseUrl: gateway.baseUrl,
    apiKey: gateway.key,
    lastEventId: kept!.id,
    ...seen
  })
  t.teardown(() => subscription.unsubscribe())
  await seen.until(() => seen.events.length === 1)
  t.same(seen.events.map(e => e.data.note), ['missed'])
})
