import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { test } from 'tap'
import WebSocket from 'ws'
import { BookedEventSchema } from '../src/schemas/events.ts'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

async function listen (t: Parameters<Parameters<typeof test>[0]>[0]) {
  const built = await build(t)
  await built.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = built.app.server.address() as { port: number }
  return { ...built, base: `127.0.0.1:${port}` }
}

function connect (url: string): Promise<WebSocket> {
  const socket = new WebSocket(url)
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket))
    socket.once('error', reject)
  })
}

test('every connected client receives the booked notification after a successful booked POST', async (t) => {
  const { app, base } = await listen(t)
  const sockets = await Promise.all([connect(`ws://${base}/v1/events`), connect(`ws://${base}/v1/events`)])
  t.teardown(() => { for (const s of sockets) s.terminate() })
  const received = sockets.map(s => once(s, 'message'))

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
    t.ok(validEvent(event), `the message is a BookedEvent as documented ${JSON.stringify(validEvent.errors)}`)
    t.equal(event.type, 'booking.booked')
    t.equal(event.requestId, 'evt-1')
    t.same(event.data, { bookingRequestId: F.bookingRequestId, booked: true, note: 'Truck B 1234 XYZ' })
    t.match(event.occurredAt, /^\d{4}-\d{2}-\d{2}T/)
    const { upstreamMessage, ...booking } = answer.data
    t.same(booking, event.data, 'the answer describes the booking with the same names and forms as the event')
    t.type(upstreamMessage, 'string', 'plus the hub\'s own text')
  }
  t.equal(app.events.size, 2)
})

test('the message is the BookedEvent schema that the OpenAPI document publishes for the route', async (t) => {
  const doc = JSON.parse(await readFile(new URL('../openapi/openapi.json', import.meta.url), 'utf8'))
  t.same(doc.paths['/v1/events'].get['x-websocket-message'], { $ref: '#/components/schemas/BookedEvent' })
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
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body)
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
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ booked: true })
  })
  t.equal(res.status, 502)
  // A successful one afterwards arrives, and is the only message.
  const next = once(socket, 'message')
  await fetch(`http://${base}/v1/bookings/${F.bookingRequestId}/booked`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ booked: true })
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
