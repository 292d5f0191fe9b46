import fc from 'fast-check'
import { test } from 'tap'
import { loadConfig } from '../src/config/load.ts'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { operationsOf } from '../src/catalogue/operations.ts'
import { buildPath, formEncode, resolveOperations } from '../src/upstream/resolve-operations.ts'
import { build, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY } from './helper.ts'

const sp2Query = `npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}`
const offer = { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
const containerQuery: Record<string, string> = {
  bc20: 'blDate=2024-01-01',
  bc25: 'blDate=2024-01-01',
  bc27: 'blDate=2024-01-01',
  bc261: 'blNo=ABC1',
  bc262: 'blNo=ABC1',
  bc28: 'blNo=ABC1'
}

/** Every route, with the credential headers interface.md lists for its operation. */
const ROUTES: Array<{ name: string, method?: 'GET' | 'POST', url: string, payload?: object, key: boolean, token: boolean }> = [
  { name: 'noblbc16', url: `/v1/customs/bc16/bills-of-lading?npwp=${F.taxpayer.npwp}`, key: true, token: true },
  { name: 'noblbc20', url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`, key: true, token: true },
  { name: 'noblbc23', url: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}`, key: true, token: true },
  { name: 'BC20ByNoPib', url: `/v1/customs/bc20/declarations/${F.declaration.pibNo}?npwp=${F.declaration.npwp}`, key: true, token: true },
  { name: 'BC20ByNoBL (4.5: Authorization only)', url: `/v1/customs/bc20/declarations?blNo=${F.declaration.blNo}`, key: false, token: true },
  ...operationsOf('container-list').map(op => ({ name: op.id, url: `${op.route.url}?${containerQuery[op.documentType.code] ?? 'blNo=ABC1&blDate=2024-01-01'}`, key: true, token: true })),
  { name: 'host-to-host', url: `/v1/sp2/documents?${sp2Query}`, key: true, token: true },
  { name: 'cargo_owner', url: `/v1/sp2/containers?${sp2Query}&containerNo=${F.sp2.containerNo}`, key: true, token: true },
  { name: 'final (5.2: Authorization only)', method: 'POST', url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`, key: false, token: true },
  { name: 'DetilBooking (5.2: API key only)', method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/offers`, payload: offer, key: true, token: false },
  { name: 'isBooked', method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true }, key: true, token: true }
]

const CALLER_HEADERS = {
  authorization: 'Bearer caller-own-credential',
  cookie: 'session=caller-cookie',
  'x-forwarded-for': '203.0.113.9',
  'x-custom-header': 'caller-value',
  'customs-api-key': 'caller-supplied-key',
  'x-hub-key': 'caller-supplied-key',
  'x-request-id': 'trace-01'
}

const ALLOWED = new Set(['host', 'connection', 'accept', 'user-agent', 'x-request-id', 'content-type', 'content-length', 'x-hub-key', 'authorization'])

test('each operation sends exactly its headers: the key under the configured name, the token, the request id, nothing of the caller\'s', async (t) => {
  const { app, sandbox } = await build(t, { env: { UPSTREAM_API_KEY_HEADER: 'X-Hub-Key' }, sandbox: { apiKeyHeader: 'x-hub-key' } })
  for (const route of ROUTES) {
    sandbox.reset()
    const res = await app.inject({ method: route.method ?? 'GET', url: route.url, headers: CALLER_HEADERS, ...(route.payload ? { payload: route.payload } : {}) })
    t.equal(res.statusCode, 200, `${route.name}: ${res.body.slice(0, 200)}`)
    t.equal(res.headers['x-request-id'], 'trace-01', `${route.name}: the caller's sane id is kept`)
    t.equal(sandbox.requests.length, 1, `${route.name}: one upstream call`)
    const sent = sandbox.requests[0]!.headers
    t.equal(sent['x-hub-key'], route.key ? SANDBOX_API_KEY : undefined, `${route.name}: API key ${route.key ? 'sent' : 'not sent'}`)
    t.equal(sent.authorization, route.token ? SANDBOX_ACCESS_TOKEN : undefined, `${route.name}: token ${route.token ? 'sent' : 'not sent'}`)
    t.equal(sent['x-request-id'], 'trace-01', `${route.name}: request id sent upstream`)
    t.same(Object.keys(sent).filter(h => !ALLOWED.has(h)), [], `${route.name}: no other header`)
    t.notOk(JSON.stringify(sent).includes('caller-'), `${route.name}: no caller value reaches the hub`)
  }
})

test('an insane caller request id is replaced, never echoed', async (t) => {
  const { app, sandbox } = await build(t)
  for (const id of ['has space', 'x'.repeat(129), 'semi;colon', '<script>']) {
    const res = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`, headers: { 'x-request-id': id } })
    const replaced = res.headers['x-request-id'] as string
    t.not(replaced, id)
    t.match(replaced, /^[0-9a-f-]{36}$/)
    t.equal(sandbox.requests.at(-1)?.headers['x-request-id'], replaced)
  }
  const res = await app.inject({ url: '/health/live' })
  t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'generated when absent')
})

test('path placement puts parameters in path segments, each encoded', async (t) => {
  const { app, sandbox } = await build(t, { env: { UPSTREAM_PARAM_PLACEMENT: 'path' } })
  const res = await app.inject({ url: `/v1/customs/bc20/declarations/${F.declaration.pibNo}?npwp=${F.declaration.npwp}` })
  t.equal(res.statusCode, 200)
  t.equal(sandbox.requests.at(-1)?.path, `/V1/HUB/INT/AUTH/BC20ByNoPib/${F.declaration.npwp}/${F.declaration.pibNo}`)

  const dotted = await app.inject({ url: '/v1/customs/bc261/containers?blNo=AB.12-3' })
  t.equal(dotted.statusCode, 200)
  t.equal(sandbox.requests.at(-1)?.path, '/V1/HUB/INT/AUTH/kontainerbc261/AB.12-3')

  const booked = await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true } })
  t.equal(booked.statusCode, 200)
  t.equal(sandbox.requests.at(-1)?.query.idRequestBooking, F.bookingRequestId, 'idRequestBooking stays in the query (interface.md 4.9)')
})

test('path placement: a value holding / (or a dot segment) never becomes a hub path segment', async (t) => {
  const { app, sandbox } = await build(t, { env: { UPSTREAM_PARAM_PLACEMENT: 'path' } })
  const urls = [
    '/v1/customs/bc261/containers?blNo=A/../../X',
    '/v1/customs/bc261/containers?blNo=A%2F..%2F..%2FX',
    '/v1/customs/bc261/containers?blNo=AB%2F12',
    '/v1/customs/bc23/containers?blNo=A/..&blDate=2024-02-01',
    '/v1/customs/bc20/declarations?blNo=MEDU/123',
    `/v1/sp2/documents?npwp=${F.sp2.npwp}&blNo=A/../X&blDate=${F.sp2.blDate}`
  ]
  for (const url of urls) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().code, 'VALIDATION_FAILED')
    t.same(res.json().details?.map((d: { field: string }) => d.field), ['query.blNo'], `${url}: names blNo`)
  }
  t.equal(sandbox.count(), 0, 'nothing reached the hub')

  // The same values stay allowed in the query string, where a / is only a character.
  const query = await build(t)
  const res = await query.app.inject({ url: '/v1/customs/bc261/containers?blNo=AB%2F12' })
  t.equal(res.statusCode, 200)
  t.equal(query.sandbox.requests.at(-1)?.query.noBl, 'AB/12')
})

test('buildPath refuses a path segment holding / or \\ or a dot segment, whatever the route let through', async (t) => {
  const op = resolveOperations(loadConfig({ UPSTREAM_PARAM_PLACEMENT: 'path' })).get('kontainerbc261')!
  for (const blNo of ['A/../../X', '..', '.', 'A\\..\\X', '/']) {
    t.throws(() => buildPath(op, { blNo }, ''), { code: 'VALIDATION_FAILED', details: [{ field: 'blNo' }] }, JSON.stringify(blNo))
  }
  t.equal(buildPath(op, { blNo: 'A..B' }, ''), '/V1/HUB/INT/AUTH/kontainerbc261/A..B')
  t.throws(() => buildPath(op, {}, ''), { code: 'VALIDATION_FAILED', details: [{ field: 'blNo', rule: 'is required' }] }, 'a value for each placeholder')
  const query = resolveOperations(loadConfig({})).get('kontainerbc261')!
  t.equal(buildPath(query, { blNo: 'A/../X' }, ''), '/V1/HUB/INT/AUTH/kontainerbc261/?noBl=A%2F..%2FX', 'in the query string it is only a value')
})

test('production prefixes, a custom path segment and a custom date format', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { UPSTREAM_ENV: 'production', UPSTREAM_PATH_SEGMENT: 'GATE', UPSTREAM_OPERATIONS: JSON.stringify({ kontainerbc25: { dateFormat: 'YYYY-MM-DD' } }) },
    sandbox: { pathSegment: 'GATE' }
  })
  await app.inject({ url: `/v1/sp2/documents?${sp2Query}` })
  t.equal(sandbox.requests.at(-1)?.path, '/V3/GATE/document_sp2/host-to-host/')
  await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/offers`, payload: offer })
  t.equal(sandbox.requests.at(-1)?.path, '/V3/GATE/DetilBooking/')
  await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  t.equal(sandbox.requests.at(-1)?.path, '/V1/GATE/INT/AUTH/noblbc20/')
  await app.inject({ url: '/v1/customs/bc25/containers?blDate=2024-01-05' })
  t.equal(sandbox.requests.at(-1)?.query.tglBl, '2024-01-05', 'date format override')
})

test('development prefixes by default', async (t) => {
  const { app, sandbox } = await build(t)
  await app.inject({ url: `/v1/sp2/documents?${sp2Query}` })
  t.equal(sandbox.requests.at(-1)?.path, '/HUB-DEV/document_sp2/host-to-host/')
  await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/offers`, payload: offer })
  t.equal(sandbox.requests.at(-1)?.path, '/HUB-DEV/DetilBooking/')
})

test('query components are encoded byte for byte as URLSearchParams encodes them', async (t) => {
  const viaUrlSearchParams = (value: string) => new URLSearchParams([['k', value]]).toString().slice(2)
  for (const value of ['012345678901000', 'COSUJKT8501994', '20240616', 'a b', "!'()~*", 'é/ü?&=#%+', '\ud800x', 'x\udc00', '']) {
    t.equal(formEncode(value), viaUrlSearchParams(value), JSON.stringify(value))
  }
  fc.assert(fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('\ud800', '\udfff', ' ', '~'), fc.string({ unit: 'binary', maxLength: 1 })) }), (value) => formEncode(value) === viaUrlSearchParams(value)), { numRuns: 2000 })
  t.pass('2,000 arbitrary strings, lone surrogates included')
})
