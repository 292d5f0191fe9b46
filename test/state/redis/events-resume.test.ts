import type { FastifyInstance } from 'fastify'
import { test } from 'tap'
import { EventSource } from 'undici'
import {
  createGatewayClient,
  subscribeEvents,
  type BookedEvent,
  type StreamReload
} from '../../../clients/typescript/src/index.ts'
import { buildApp } from '../../../src/app.ts'
import { resolveConfig } from '../../../src/config/resolve.ts'
import { SANDBOX_FIXTURES as F, sandboxEnv, startSandbox } from '../../../src/sandbox/index.ts'
import {
  RESILIENCE_OFF,
  testProfile,
  writeClientsFile,
  type TestClient
} from '../../helpers/helper.ts'
import { startRedisServer, until } from '../../helpers/redis-server.ts'

// A Node program (the typed client's subscribeEvents) against two gateway
// replicas on one redis-server: the replica its socket is on restarts while
// the other takes booked POSTs, and the program misses nothing.

type Test = Parameters<Parameters<typeof test>[0]>[0]

const WEB: TestClient = {
  name: 'web-app',
  key: 'key-web',
  scopes: ['bookings:write', 'events:read']
}

async function replicas (t: Test) {
  const redis = await startRedisServer(t)
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const config = resolveConfig({
    ...sandboxEnv(sandbox.url),
    ...RESILIENCE_OFF,
    LOG_LEVEL: 'warn',
    CLIENTS_FILE: writeClientsFile(t, [WEB]),
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: 'cgw-resume:',
    REDIS_COMMAND_TIMEOUT_MS: '2000'
  })
  const start = async (
    port = 0
  ): Promise<{ app: FastifyInstance; baseUrl: string; port: number }> => {
    const app = await buildApp({ config, sandbox: true, profile: testProfile() }, false)
    t.teardown(() => app.close())
    await app.listen({ port, host: '127.0.0.1' })
    const address = app.server.address() as { port: number }
    return { app, baseUrl: `http://127.0.0.1:${address.port}`, port: address.port }
  }
  return { redis, start, a: await start(), b: await start() }
}

async function book (baseUrl: string, note: string): Promise<void> {
  const { response } = await createGatewayClient({ baseUrl, apiKey: WEB.key }).POST(
    '/v1/bookings/{bookingRequestId}/booked',
    { params: { path: { bookingRequestId: F.bookingRequestId } }, body: { booked: true, note } }
  )
  if (response.status !== 200) throw new Error(`booked POST answered ${response.status}`)
}

test('subscribeEvents misses no event while the replica it is connected to restarts and the ' +
  'other takes the writes', async (t) => {
  const { a, b, start } = await replicas(t)
  const events: BookedEvent[] = []
  const reloads: StreamReload[] = []
  let opens = 0
  const subscription = subscribeEvents({
    baseUrl: a.baseUrl,
    apiKey: WEB.key,
    reconnect: { minDelayMs: 50, maxDelayMs: 200 },
    onEvent: (event) => events.push(event),
    onReload: (signal) => reloads.push(signal),
    onOpen: () => {
      opens++
    }
  })
  t.teardown(() => subscription.unsubscribe())
  await until(() => opens === 1, 5000, 'connected to A')
  await book(b.baseUrl, 'on B before')
  await book(a.baseUrl, 'on A before')
  await until(() => events.length === 2, 5000, 'both before the restart')

  await a.app.close()
  for (const note of ['during 1', 'during 2', 'during 3']) await book(b.baseUrl, note)
  const restarted = await start(a.port)
  await until(() => opens === 2, 10_000, 'reconnected to the restarted A')
  await book(restarted.baseUrl, 'on A after')
  await book(b.baseUrl, 'on B after')
  await until(() => events.length === 7, 5000, 'all seven')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(
    events.map((e) => e.data.note),
    ['on B before', 'on A before', 'during 1', 'during 2', 'during 3', 'on A after', 'on B after'],
    'none missed, none twice, in order'
  )
  t.same(reloads, [], 'no reload: the shared stream had it all')
})

test('a ticket issued by one replica opens the event stream on the other, once', async (t) => {
  const { a, b } = await replicas(t)
  const issued = await fetch(`${b.baseUrl}/v1/events/tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${WEB.key}` }
  })
  const { data } = await issued.json() as { data: { ticket: string } }
  const source = new EventSource(`${a.baseUrl}/v1/events/stream?ticket=${data.ticket}`)
  t.teardown(() => source.close())
  const notes: string[] = []
  source.addEventListener('booking.booked', (event) =>
    notes.push(
      (JSON.parse(String((event as MessageEvent).data)) as { data: { note: string } }).data.note
    )
  )
  let opened = false
  source.addEventListener('open', () => { opened = true })
  await until(() => opened, 5000, 'open')
  await book(b.baseUrl, 'written on B')
  await until(() => notes.length === 1, 5000, 'the event on A\'s stream')
  t.same(notes, ['written on B'])
  t.equal(
    (await fetch(`${b.baseUrl}/v1/events/stream?ticket=${data.ticket}`)).status,
    401,
    'spent on every replica'
  )
})
