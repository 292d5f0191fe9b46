import fc from 'fast-check'
import { test } from 'tap'
import { loadConfig } from '../src/config/load.ts'
import { profileFromSettings } from '../src/profile/from-settings.ts'
import { resolveProfile } from '../src/profile/resolve.ts'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { buildPath, formEncode, resolveOperations } from '../src/upstream/resolve-operations.ts'
import { build } from './helper.ts'
import { HUBS } from './hubs.ts'
import { requestSuite } from './suites/hub-requests.ts'

const sp2Query = `npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}`
const offer = { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }

// Every route's headers (test/suites/hub-requests.ts; the same suite runs
// against each profile in test/hub-profiles/), here with the key's header
// renamed by the profile's defaults.apiKeyHeader.
requestSuite(HUBS.default, {
  profile: { defaults: { apiKeyHeader: 'X-Hub-Key' } },
  sandbox: { apiKeyHeader: 'x-hub-key' },
  keyHeader: 'x-hub-key'
})

/** Parameters as path segments, in order: what --from-env writes for the old path placement. */
const IN_PATH = {
  operations: profileFromSettings({ UPSTREAM_PARAM_PLACEMENT: 'path' }, undefined)
    .profile?.operations
}

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
  const { app, sandbox } = await build(t, { profile: IN_PATH })
  const res = await app.inject({ url: `/v1/customs/bc20/declarations/${F.declaration.pibNo}?npwp=${F.declaration.npwp}` })
  t.equal(res.statusCode, 200)
  t.equal(sandbox.requests.at(-1)?.path, `/V1/HUB/INT/AUTH/BC20ByNoPib/${F.declaration.npwp}/${F.declaration.pibNo}`)

  const dotted = await app.inject({ url: '/v1/customs/bc261/containers?blNo=AB.12-3' })
  t.equal(dotted.statusCode, 200)
  t.equal(sandbox.requests.at(-1)?.path, '/V1/HUB/INT/AUTH/kontainerbc261/AB.12-3')

  const booked = await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true } })
  t.equal(booked.statusCode, 200)
  t.equal(sandbox.requests.at(-1)?.query.idRequestBooking, F.bookingRequestId,
    'idRequestBooking stays in the query (docs/hub.md#operations)')
})

test('path placement: a value holding / (or a dot segment) never becomes a hub path segment', async (t) => {
  const { app, sandbox } = await build(t, { profile: IN_PATH })
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
  const config = loadConfig({})
  const inPath = resolveProfile(config, { builtIn: { name: 'x', ...IN_PATH } })
  const op = resolveOperations(config, inPath).get('kontainerbc261')!
  for (const blNo of ['A/../../X', '..', '.', 'A\\..\\X', '/']) {
    t.throws(() => buildPath(op, { blNo }, ''), { code: 'VALIDATION_FAILED', details: [{ field: 'blNo' }] }, JSON.stringify(blNo))
  }
  t.equal(buildPath(op, { blNo: 'A..B' }, ''), '/V1/HUB/INT/AUTH/kontainerbc261/A..B')
  t.throws(() => buildPath(op, {}, ''), { code: 'VALIDATION_FAILED', details: [{ field: 'blNo', rule: 'is required' }] }, 'a value for each placeholder')
  const query = resolveOperations(config).get('kontainerbc261')!
  t.equal(buildPath(query, { blNo: 'A/../X' }, ''), '/V1/HUB/INT/AUTH/kontainerbc261/?noBl=A%2F..%2FX', 'in the query string it is only a value')
})

test('production prefixes, a custom path segment and a custom date format', async (t) => {
  const { app, sandbox } = await build(t, {
    profile: {
      prefixes: { lookup: '/V1/GATE/INT/AUTH', sp2: '/V3/GATE', booking: '/V3/GATE' },
      operations: { kontainerbc25: { dateSent: 'YYYY-MM-DD' } }
    },
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
