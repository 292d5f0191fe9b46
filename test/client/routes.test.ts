import { readFile } from 'node:fs/promises'
import t from 'tap'
import { createGatewayClient, type GatewayClient } from '../../clients/typescript/src/index.ts'
import { operationsOf } from '../../src/catalogue/operations.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { listeningGateway } from './gateway.ts'

/** `YYYYMMDD` (the sandbox fixtures' request form) as the gateway's `YYYY-MM-DD`. */
const isoDate = (compact: string) =>
  `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6, 8)}`

/** Every `METHOD /path` this client called, as the document names it. */
function recordRoutes (client: GatewayClient): Set<string> {
  const called = new Set<string>()
  client.use({
    onRequest ({ request, schemaPath }) {
      called.add(`${request.method} ${schemaPath}`)
    }
  })
  return called
}

const gateway = await listeningGateway(t)
const client = createGatewayClient({ baseUrl: gateway.baseUrl, apiKey: gateway.key })
const called = recordRoutes(client)

t.test('operations', async (t) => {
  const live = await client.GET('/health/live')
  t.equal(live.response.status, 200)
  t.equal(live.data?.data.status, 'ok')
  const ready = await client.GET('/health/ready')
  t.equal(ready.response.status, 200)
  const metrics = await client.GET('/metrics', { parseAs: 'text' })
  t.match(metrics.data, /^# HELP /m)
})

t.test('BL lists of the three document types, and of a taxpayer at once', async (t) => {
  const { npwp } = F.taxpayer
  const lists = {
    bc16: await client.GET('/v1/customs/bc16/bills-of-lading', { params: { query: { npwp } } }),
    bc20: await client.GET('/v1/customs/bc20/bills-of-lading', { params: { query: { npwp } } }),
    bc23: await client.GET('/v1/customs/bc23/bills-of-lading', { params: { query: { npwp } } })
  }
  for (const type of ['bc16', 'bc20', 'bc23'] as const) {
    const { data, error } = lists[type]
    t.equal(error, undefined, `${type}: no error`)
    t.same(
      data?.data.map((bl) => bl.blNo),
      F.taxpayer[type].map((bl) => bl.blNo),
      `${type}: the sandbox's BLs`
    )
    t.equal(data?.meta.count, F.taxpayer[type].length)
  }
  const all = await client.GET('/v1/taxpayers/{npwp}/bills-of-lading', {
    params: { path: { npwp: '01.234.567.8-901.000' } }
  })
  t.equal(
    all.data?.meta.count,
    F.taxpayer.bc16.length + F.taxpayer.bc20.length + F.taxpayer.bc23.length
  )
  t.same(new Set(all.data?.data.map(bl => bl.documentType)), new Set(['bc16', 'bc20', 'bc23']))
  t.ok(all.data?.meta.complete)
})

t.test('BC 2.0 declarations by PIB and by BL', async (t) => {
  const { npwp, pibNo } = F.declaration
  const byPib = await client.GET('/v1/customs/bc20/declarations/{pibNo}', {
    params: { path: { pibNo }, query: { npwp } }
  })
  t.equal(byPib.data?.data.pibNo, pibNo)
  const byBl = await client.GET('/v1/customs/bc20/declarations', {
    params: { query: { blNo: F.blWithTwoDeclarations.blNo } }
  })
  t.same(byBl.data?.data.map(d => d.pibNo).sort(), [...F.blWithTwoDeclarations.pibNos].sort())
})

t.test('container lists of every document type, each with exactly its parameters', async (t) => {
  const c = F.containers
  const typed = await client.GET('/v1/customs/bc23/containers', {
    params: { query: { blNo: c.kontainerbc23.noBl, blDate: isoDate(c.kontainerbc23.tglBl) } }
  })
  t.same(
    typed.data?.data.map((container) => container.containerNo),
    c.kontainerbc23.containerNos,
    'one route with its typed parameters'
  )
  // Every container route of the catalogue, with the parameters its operation takes: a new one is
  // called without a line here.
  for (const op of operationsOf('container-list')) {
    const fixture = c[op.id]
    const query = Object.fromEntries(
      op.params.map((p) => [p.name, p.name === 'blNo' ? fixture.noBl : isoDate(fixture.tglBl)])
    )
    // Each route's query type is its own; all of them take at most these two.
    const url = `/v1/customs/${op.documentType.code}/containers` as const
    t.equal(url, op.route.url)
    const { data, error } = await client.GET(url, {
      params: { query: query as { blNo: string; blDate: string } }
    })
    t.equal(error, undefined, `${op.id}: no error`)
    t.same(
      data?.data.map((container) => container.containerNo),
      fixture.containerNos,
      `${op.id}: the sandbox's containers`
    )
  }
})

t.test('SP2 documents and containers, and a finalization', async (t) => {
  const { npwp, blNo, blDate, documentIds, sp2Id, containerNo } = F.sp2
  const documents = await client.GET('/v1/sp2/documents', {
    params: { query: { npwp, blNo, blDate } }
  })
  t.same(documents.data?.data.map(d => d.sp2Id), documentIds)
  const containers = await client.GET('/v1/sp2/containers', {
    params: { query: { npwp, blNo, blDate, containerNo } }
  })
  t.ok(
    containers.data !== undefined && containers.data.data.length > 0,
    'containers of the cargo owner'
  )
  const final = await client.POST('/v1/sp2/documents/{sp2Id}/finalization', {
    params: { path: { sp2Id } }
  })
  t.equal(final.response.status, 200)
  t.equal(final.error, undefined)
})

t.test('a shipment in one call: its parts typed as the single routes answer them', async (t) => {
  const { npwp, blNo, blDate, documentIds } = F.sp2
  const { data, error } = await client.GET('/v1/shipments/{blNo}', {
    params: { path: { blNo }, query: { npwp, blDate, documentType: 'bc20' } }
  })
  t.equal(error, undefined)
  t.same(data?.data.sp2Documents?.map(d => d.sp2Id), documentIds)
  t.same(
    data?.data.declarations?.map((d) => d.pibNo).sort(),
    [...F.blWithTwoDeclarations.pibNos].sort()
  )
  t.same(data?.data.containers?.map(c => c.containerNo), F.containers.kontainerbc20.containerNos)
  t.same(data?.meta.sources.map(source => source.status), ['ok', 'ok', 'ok'])
})

t.test('an offer and a booked notification', async (t) => {
  const offer = await client.POST('/v1/bookings/{bookingRequestId}/offers', {
    params: { path: { bookingRequestId: F.bookingRequestId } },
    body: { serviceOrderId: 'SO-1', price: 1250000.5, offeredAt: '2024-03-01T08:15:00+07:00' }
  })
  t.equal(offer.response.status, 200)
  t.ok(offer.data?.data, 'the hub\'s answer')
  const booked = await client.POST('/v1/bookings/{bookingRequestId}/booked', {
    params: { path: { bookingRequestId: F.bookingRequestId } },
    body: { booked: true, note: 'Truck B 1234 XYZ' }
  })
  t.equal(booked.response.status, 200)
})

t.test('a ticket for an event stream', async (t) => {
  const { data, error } = await client.POST('/v1/events/tickets')
  t.equal(error, undefined)
  t.match(data?.data.ticket, /^[\w-]{20,}$/)
})

t.test('a lookup asked again with its ETag is a 304: data and error undefined', async (t) => {
  const { npwp } = F.taxpayer
  const first = await client.GET('/v1/customs/bc20/bills-of-lading', {
    params: { query: { npwp } }
  })
  const etag = first.response.headers.get('etag')
  t.match(etag, /^"[0-9a-f]{16}"$/)
  const again = await client.GET('/v1/customs/bc20/bills-of-lading', {
    params: { query: { npwp }, header: { 'if-none-match': etag ?? '' } }
  })
  t.equal(again.response.status, 304)
  t.equal(again.data, undefined)
  t.equal(again.error, undefined)
  const changed = await client.GET('/v1/customs/bc20/bills-of-lading', {
    params: { query: { npwp }, header: { 'if-none-match': '"0000000000000000"' } }
  })
  t.equal(changed.response.status, 200)
  t.same(changed.data, first.data)
})

t.test(
  "with a cache, the client's conditional lookup is a 304 from it, without a hub call",
  async (t) => {
    const cached = await listeningGateway(t, { env: { CACHE_TTL_SECONDS: '60' } })
    const api = createGatewayClient({ baseUrl: cached.baseUrl, apiKey: cached.key })
    const query = { npwp: F.taxpayer.npwp }
    const first = await api.GET('/v1/customs/bc20/bills-of-lading', { params: { query } })
    const etag = first.response.headers.get('etag') ?? ''
    const again = await api.GET('/v1/customs/bc20/bills-of-lading', {
      params: { query, header: { 'if-none-match': etag } }
    })
    t.equal(again.response.status, 304)
    t.equal(
      cached.sandbox.count('noblbc20'),
      1,
      "answered from the gateway's cache: fetch's own no-cache was not sent"
    )
    // Asked afresh on purpose, the hub is asked, and the unchanged answer is still a 304.
    const fresh = await api.GET('/v1/customs/bc20/bills-of-lading', {
      params: { query, header: { 'if-none-match': etag } },
      cache: 'no-store'
    })
    t.equal(fresh.response.status, 304)
    t.equal(cached.sandbox.count('noblbc20'), 2)
  }
)

t.test('every route of the OpenAPI document was called through the client', async (t) => {
  const doc = JSON.parse(
    await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')
  ) as { paths: Record<string, Record<string, unknown>> }
  const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)
  )
  // GET /v1/events is the WebSocket: test/client/events.test.ts receives its events through
  // subscribeEvents; GET /v1/events/stream is for EventSource (test/routes/events-stream.test.ts).
  t.same(
    [...called].sort(),
    documented
      .filter((route) => route !== 'GET /v1/events' && route !== 'GET /v1/events/stream')
      .sort()
  )
})

t.test('errors are the gateway\'s envelope, with the message and the request id', async (t) => {
  const invalid = await client.GET('/v1/taxpayers/{npwp}/bills-of-lading', {
    params: { path: { npwp: '12345' } }
  })
  t.equal(invalid.response.status, 400)
  t.equal(invalid.error?.code, 'VALIDATION_FAILED')
  t.match(invalid.error?.message, /npwp/)
  t.match(invalid.error?.details?.[0]?.field, /npwp$/)
  t.equal(invalid.error?.requestId, invalid.response.headers.get('x-request-id'))

  const hub = await client.GET('/v1/customs/bc20/bills-of-lading', {
    params: { query: { npwp: '990000000000503' } }
  })
  t.equal(hub.error?.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(hub.response.status, 503)
})

t.test(
  'the key goes in Authorization: Bearer, from apiKey or from getApiKey on every request',
  async (t) => {
    const anonymous = createGatewayClient({ baseUrl: gateway.baseUrl })
    const refused = await anonymous.GET('/v1/customs/bc16/bills-of-lading', {
      params: { query: { npwp: F.taxpayer.npwp } }
    })
    t.equal(refused.response.status, 401)
    t.equal(refused.error?.code, 'UNAUTHORIZED')

    const asked: string[] = []
    const keys = ['cgw_not-a-key', gateway.key]
    const rotating = createGatewayClient({
      baseUrl: gateway.baseUrl,
      apiKey: 'never used when getApiKey is given',
      getApiKey: async () => {
        const key = keys[asked.length] ?? gateway.key
        asked.push(key)
        return key
      }
    })
    const first = await rotating.GET('/v1/customs/bc16/bills-of-lading', {
      params: { query: { npwp: F.taxpayer.npwp } }
    })
    const second = await rotating.GET('/v1/customs/bc16/bills-of-lading', {
      params: { query: { npwp: F.taxpayer.npwp } }
    })
    t.equal(first.response.status, 401, 'the first key asked is unknown')
    t.equal(second.response.status, 200, "the second is the client's")
    t.equal(asked.length, 2, 'asked once per request')
  }
)

t.test('POSTs carry a new Idempotency-Key per call, or the caller\'s', async (t) => {
  const sent: Array<string | null> = []
  const recording = createGatewayClient({
    baseUrl: gateway.baseUrl,
    apiKey: gateway.key,
    fetch: async (request) => {
      sent.push(request.headers.get('idempotency-key'))
      return await fetch(request)
    }
  })
  const path = { bookingRequestId: F.bookingRequestIds[1] ?? F.bookingRequestId }
  const body = { serviceOrderId: 'SO-7', price: 990000, offeredAt: '2024-03-01T09:00:00+07:00' }
  const before = gateway.sandbox.count('DetilBooking')

  const a = await recording.POST('/v1/bookings/{bookingRequestId}/offers', {
    params: { path },
    body
  })
  const b = await recording.POST('/v1/bookings/{bookingRequestId}/offers', {
    params: { path },
    body
  })
  t.equal(sent.length, 2)
  t.match(sent[0], /^[0-9a-f-]{32,36}$/, 'a generated key')
  t.not(sent[0], sent[1], 'a new one per call')
  t.equal(a.response.headers.get('idempotent-replayed'), null)
  t.equal(
    b.response.headers.get('idempotent-replayed'),
    null,
    'so the same body twice is two writes'
  )
  t.equal(gateway.sandbox.count('DetilBooking') - before, 2)

  const header = { 'idempotency-key': 'offer-SO-7-attempt' }
  const first = await recording.POST('/v1/bookings/{bookingRequestId}/offers', {
    params: { path, header },
    body
  })
  const retry = await recording.POST('/v1/bookings/{bookingRequestId}/offers', {
    params: { path, header },
    body
  })
  t.same(sent.slice(2), ['offer-SO-7-attempt', 'offer-SO-7-attempt'], 'the caller\'s key, as given')
  t.equal(first.response.status, 200)
  t.equal(retry.response.headers.get('idempotent-replayed'), 'true', 'the retry is a replay')
  t.same(retry.data, first.data)
  t.equal(gateway.sandbox.count('DetilBooking') - before, 3, 'the hub saw the retried write once')

  // A page served over plain http from another host is no secure context: no crypto.randomUUID.
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true })
  try {
    await recording.POST('/v1/bookings/{bookingRequestId}/offers', { params: { path }, body })
  } finally {
    Reflect.deleteProperty(globalThis.crypto, 'randomUUID')
  }
  t.match(sent.at(-1), /^[0-9a-f]{32}$/, 'without crypto.randomUUID: 128 random bits in hex')
  t.equal(typeof globalThis.crypto.randomUUID, 'function', 'put back')

  const get = await recording.GET('/v1/customs/bc16/bills-of-lading', {
    params: { query: { npwp: F.taxpayer.npwp } }
  })
  t.equal(get.response.status, 200)
  t.equal(sent.at(-1), null, 'no key on a GET')
})
