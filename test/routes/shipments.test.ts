import { test } from 'tap'
import { magicValue, SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { narrowed } from '../../src/routes/shipments.ts'
import { operationOf } from '../../src/catalogue/operations.ts'
import { build, writeTempFile, type Built } from '../helpers/helper.ts'
import { hubRequest, profileJson, type ProfileJson } from '../helpers/hub-profiles.ts'

/**
 * GET /v1/shipments/{blNo}: a shipment page's data from one call, checked
 * against what the single lookups answer on the sandbox.
 */

const { npwp, blNo, blDate } = F.sp2
const SHIPMENT = `/v1/shipments/${blNo}?npwp=${npwp}&blDate=${blDate}&documentType=bc20`
// BC 2.7 lists a whole day; on this day the sandbox has containers of two BLs.
const BC27_DAY = { blNo: 'EGLVJKT8653117', blDate: '2024-05-22', other: 'HLCUBLW2305928' }

interface Source {
  part: string
  operation?: string
  status: string
  count?: number
  code?: string
  message?: string
}

test('a BC 2.0 shipment: its declarations, containers and SP2 documents, each as its own route ' +
  'answers it, from one hub call each', async (t) => {
  const { app, sandbox } = await build(t)
  const declarations = (
    await app.inject({ url: `/v1/customs/bc20/declarations?blNo=${blNo}` })
  ).json().data
  const containers = (
    await app.inject({ url: `/v1/customs/bc20/containers?blDate=${blDate}` })
  ).json().data
  const documents = (
    await app.inject({ url: `/v1/sp2/documents?npwp=${npwp}&blNo=${blNo}&blDate=${blDate}` })
  ).json().data
  t.ok(
    declarations.length > 1 && containers.length > 0 && documents.length > 0,
    'the sandbox has all three for this BL'
  )
  sandbox.reset()

  const res = await app.inject({ url: SHIPMENT })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json; charset=utf-8/)
  const { data, meta } = res.json()
  t.same(data, {
    blNo,
    blDate,
    documentType: 'bc20',
    declarations,
    containers,
    sp2Documents: documents
  })
  t.ok(
    documents[0].containers.some((c: { gatePass?: unknown }) => 'gatePass' in c),
    'the SP2 documents carry their containers and gate passes'
  )
  t.same(meta, {
    cached: false,
    complete: true,
    sources: [
      { part: 'declarations', operation: 'BC20ByNoBL', status: 'ok', count: declarations.length },
      { part: 'containers', operation: 'kontainerbc20', status: 'ok', count: containers.length },
      {
        part: 'sp2Documents',
        operation: 'document_sp2/host-to-host',
        status: 'ok',
        count: documents.length
      }
    ]
  })
  t.same(
    sandbox.requests.map((r) => r.operation).sort(),
    ['BC20ByNoBL', 'document_sp2/host-to-host', 'kontainerbc20'],
    'one hub call per source'
  )
})

test('a source that fails is reported and its part is null; the others are answered', async (t) => {
  const { app } = await build(t)
  // The NPWP only reaches the SP2 lookup: its magic value fails that one source.
  const res = await app.inject({
    url: `/v1/shipments/${blNo}?npwp=${magicValue('503', 'npwp')}&blDate=` +
      `${blDate}&documentType=bc20`
  })
  t.equal(res.statusCode, 200)
  const { data, meta } = res.json()
  t.equal(data.sp2Documents, null)
  t.ok(data.declarations.length > 0 && data.containers.length > 0)
  t.equal(meta.complete, false)
  t.equal(meta.cached, false)
  const sp2 = meta.sources.find((s: Source) => s.part === 'sp2Documents')
  t.match(sp2, {
    operation: 'document_sp2/host-to-host',
    status: 'failed',
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The customs hub did not answer'
  })
  t.equal(res.headers['cache-control'], 'no-store', 'an incomplete answer is not to be kept')
})

test('a hub refusal of one source passes on its own message', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({
    url: `/v1/shipments/${blNo}?npwp=${magicValue('422', 'npwp')}&blDate=` +
      `${blDate}&documentType=bc20`
  })
  const sp2 = res.json().meta.sources.find((s: Source) => s.part === 'sp2Documents')
  t.match(sp2, { status: 'failed', code: 'UPSTREAM_REJECTED', upstreamMessage: /./ })
})

test('when every source fails the answer is the first one\'s error', async (t) => {
  const { app, sandbox } = await build(t)
  const res = await app.inject({
    url: `/v1/shipments/${magicValue('503')}?npwp=${npwp}&blDate=${blDate}&documentType=bc23`
  })
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'UPSTREAM_UNAVAILABLE')
  t.equal(sandbox.count(), 3, 'each source was asked')
})

test('BC 1.6 has no container lookup: containers null, source `none`, the answer ' +
  'complete', async (t) => {
  const { app, sandbox } = await build(t)
  const [bc16] = F.taxpayer.bc16
  const res = await app.inject({
    url: `/v1/shipments/${bc16!.blNo}?npwp=${npwp}&blDate=${bc16!.blDate}&documentType=bc16`
  })
  t.equal(res.statusCode, 200)
  const { data, meta } = res.json()
  t.equal(data.containers, null)
  t.same(meta.sources[1], {
    part: 'containers',
    status: 'none',
    message: 'The hub has no container lookup for BC 1.6'
  })
  t.equal(meta.complete, true)
  t.equal(sandbox.count(), 2)
})

// A hub as documented, but one that answers 404 where a list finds nothing, as some do.
const ANSWERS_404 = {
  ...profileJson('documented'),
  name: 'answers-404',
  defaults: { ...profileJson('documented').defaults, notFound: '404' }
}
// A BC 2.3 BL: no BC 2.0 declaration is filed against it.
const BC23 = F.containers.kontainerbc23
const BC23_DATE = `${BC23.tglBl.slice(0, 4)}-${BC23.tglBl.slice(4, 6)}-${BC23.tglBl.slice(6)}`
const BC23_PAGE = `/v1/shipments/${BC23.noBl}?npwp=${npwp}&blDate=${BC23_DATE}&documentType=bc23`

test('a BL without BC 2.0 declarations: an empty part of a complete page, cached, ' +
  'whether the hub answers [] or a 404 its profile names (notFound)', async (t) => {
  const hubs: Record<string, [ProfileJson, (t: Parameters<typeof build>[0]) => Promise<Built>]> = {
    '[]': [profileJson('documented'), (t) => build(t, { env: { CACHE_TTL_SECONDS: '60' } })],
    404: [ANSWERS_404, (t) => build(t, {
      sandbox: { profile: ANSWERS_404 },
      env: {
        CACHE_TTL_SECONDS: '60',
        UPSTREAM_PROFILE_FILE: writeTempFile(t, JSON.stringify(ANSWERS_404))
      }
    })]
  }
  for (const [answer, [profile, start]] of Object.entries(hubs)) {
    await t.test(`the hub answers ${answer}`, async (t) => {
      const { app, sandbox } = await start(t)
      const asked = hubRequest(profile, 'BC20ByNoBL', { blNo: BC23.noBl })
      const hub = await fetch(`${sandbox.url}${asked.path}`, { headers: asked.headers })
      t.equal(`${hub.status} ${await hub.text()}`, answer === '404'
        ? '404 {"message":"Data tidak ditemukan"}'
        : '200 []', 'the hub answers as its profile says')
      sandbox.reset()

      const res = await app.inject({ url: BC23_PAGE })
      t.equal(res.statusCode, 200, res.body)
      const { data, meta } = res.json()
      t.same(data.declarations, [])
      t.ok(data.containers.length > 0)
      t.equal(meta.complete, true)
      t.same(meta.sources[0],
        { part: 'declarations', operation: 'BC20ByNoBL', status: 'ok', count: 0 })
      t.equal(res.headers['cache-control'], 'private, max-age=60', 'a complete page may be kept')

      const again = await app.inject({ url: BC23_PAGE })
      t.equal(again.json().meta.cached, true)
      t.equal(sandbox.count('BC20ByNoBL'), 1, 'the empty list was cached like any other')
      const single = await app.inject({ url: `/v1/customs/bc20/declarations?blNo=${BC23.noBl}` })
      t.equal(single.statusCode, 200)
      t.same(single.json().data, [])
      t.equal(single.json().meta.count, 0)
    })
  }
})

test('a 404 where the profile says the hub answers []: UPSTREAM_NOT_FOUND', async (t) => {
  // The gateway reads the documented profile (notFound: empty); the hub answers 404.
  const { app } = await build(t, { sandbox: { profile: ANSWERS_404 } })
  const single = await app.inject({ url: `/v1/customs/bc20/declarations?blNo=${BC23.noBl}` })
  t.equal(single.statusCode, 404)
  t.equal(single.json().code, 'UPSTREAM_NOT_FOUND')
  const res = await app.inject({ url: BC23_PAGE })
  t.equal(res.json().data.declarations, null)
  t.match(res.json().meta.sources[0], { status: 'failed', code: 'UPSTREAM_NOT_FOUND' })
  t.equal(res.json().meta.complete, false)
  t.equal(res.headers['cache-control'], 'no-store')
})

test('a container list the hub answers for a whole day is narrowed to the BL; one asked by BL is ' +
  'taken as it is', async (t) => {
  const { app, sandbox } = await build(t)
  const day = (
    await app.inject({ url: `/v1/customs/bc27/containers?blDate=${BC27_DAY.blDate}` })
  ).json().data as Array<{ blNo: string }>
  t.ok(
    day.some((c) => c.blNo === BC27_DAY.other) && day.some((c) => c.blNo === BC27_DAY.blNo),
    'the day has containers of two BLs'
  )
  // Asked in lower case: the hub's numbers are upper case.
  const res = await app.inject({
    url: `/v1/shipments/${BC27_DAY.blNo.toLowerCase()}?npwp=${npwp}&blDate=` +
      `${BC27_DAY.blDate}&documentType=bc27`
  })
  const mine = day.filter((c) => c.blNo === BC27_DAY.blNo)
  t.same(res.json().data.containers, mine)
  t.equal(res.json().meta.sources[1].count, mine.length)

  const bc23 = F.containers.kontainerbc23
  const bc23Date = `${bc23.tglBl.slice(0, 4)}-${bc23.tglBl.slice(4, 6)}-${bc23.tglBl.slice(6)}`
  sandbox.reset()
  const byBl = await app.inject({
    url: `/v1/shipments/${bc23.noBl}?npwp=${npwp}&blDate=${bc23Date}&documentType=bc23`
  })
  t.same(
    byBl.json().data.containers.map((c: { containerNo: string }) => c.containerNo),
    bc23.containerNos
  )
  t.match(
    sandbox.requests.find((r) => r.operation === 'kontainerbc23')?.params,
    { noBl: bc23.noBl, tglBl: bc23.tglBl },
    'the list takes exactly its own parameters'
  )
})

test('narrowing keeps the entries that say nothing of their BL, and leaves a list it keeps whole ' +
  'as it was', async (t) => {
  const op = operationOf('kontainerbc20')
  const shipment = { npwp, blNo: 'AAA1', blDate: '2024-01-02', documentType: 'bc20' }
  const list = Buffer.from(
    JSON.stringify([
      { containerNo: 'A', blNo: 'AAA1' },
      { containerNo: 'B' },
      { containerNo: 'C', blNo: 'BBB2' }
    ])
  )
  const out = narrowed(op, list, 3, shipment)
  t.same(JSON.parse(out.json.toString()), [
    { containerNo: 'A', blNo: 'AAA1' },
    { containerNo: 'B' }
  ])
  t.equal(out.count, 2)
  const whole = Buffer.from(JSON.stringify([{ containerNo: 'A', blNo: 'AAA1' }]))
  t.equal(narrowed(op, whole, 1, shipment).json, whole, 'the same bytes, not written again')
  const byBoth = operationOf('kontainerbc23')
  t.equal(
    narrowed(byBoth, list, 3, shipment).json,
    list,
    'a list asked by BL number and date is not read at all'
  )
})

test('cached as the lookups are: a second call asks the hub nothing; no-cache asks every source ' +
  'afresh', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const first = await app.inject({ url: SHIPMENT })
  t.equal(first.json().meta.cached, false)
  t.equal(first.headers['cache-control'], 'private, max-age=60')
  const second = await app.inject({ url: SHIPMENT })
  t.equal(second.json().meta.cached, true)
  t.match(second.headers.age, /^\d+$/)
  t.same(second.json().data, first.json().data)
  t.equal(sandbox.count(), 3)
  // The single lookups share the entries.
  t.equal(
    (await app.inject({ url: `/v1/customs/bc20/declarations?blNo=${blNo}` })).json().meta.cached,
    true
  )
  const fresh = await app.inject({ url: SHIPMENT, headers: { 'cache-control': 'no-cache' } })
  t.equal(fresh.json().meta.cached, false)
  t.equal(sandbox.count(), 6)
})

test("the hub calls stay within the caller's share: a share of one asks one source at a time, " +
  'and none is refused', async (t) => {
  const { app, sandbox } = await build(t, {
    clients: [{ name: 'page', key: 'key-page', scopes: ['customs:read', 'sp2:read'] }],
    env: { UPSTREAM_MAX_CALLS_PER_CLIENT: '1' },
    sandbox: { latencyMs: 60 }
  })
  const headers = { authorization: 'Bearer key-page' }
  const res = await app.inject({ url: SHIPMENT, headers })
  t.equal(res.statusCode, 200)
  t.same(
    res.json().meta.sources.map((s: Source) => s.status),
    ['ok', 'ok', 'ok'],
    'no source refused as over the share'
  )
  const at = sandbox.requests.map((r) => r.at)
  t.ok(at[1]! - at[0]! >= 50 && at[2]! - at[1]! >= 50, `one after the other (${at.join(', ')})`)

  // The taxpayer route, three BL lists, keeps to it too.
  const bls = await app.inject({ url: `/v1/taxpayers/${npwp}/bills-of-lading`, headers })
  t.same(
    bls.json().meta.sources.map((s: Source) => s.status),
    ['ok', 'ok', 'ok']
  )
})

test('without a share (0) every source is asked at once', async (t) => {
  // One after the other, each call would wait for the one before: 1 s apart at least. Asked at
  // once, all three arrive before the first is answered, however busy the machine.
  const latencyMs = 1000
  const { app, sandbox } = await build(t, {
    env: { UPSTREAM_MAX_CALLS_PER_CLIENT: '0' }, sandbox: { latencyMs }
  })
  const res = await app.inject({ url: SHIPMENT })
  t.equal(res.json().meta.complete, true)
  const at = sandbox.requests.map(r => r.at)
  t.ok(Math.max(...at) - Math.min(...at) < latencyMs, `together (${at.join(', ')})`)
})

test('a client needs both customs:read and sp2:read; without one, 403 names it and the hub is ' +
  'not asked', async (t) => {
  const { app, sandbox } = await build(t, {
    clients: [
      { name: 'customs', key: 'key-customs', scopes: ['customs:read'] },
      { name: 'sp2', key: 'key-sp2', scopes: ['sp2:read'] },
      { name: 'both', key: 'key-both', scopes: ['sp2:read', 'customs:read'] }
    ]
  })
  const customsOnly = await app.inject({
    url: SHIPMENT,
    headers: { authorization: 'Bearer key-customs' }
  })
  t.equal(customsOnly.statusCode, 403)
  t.equal(customsOnly.json().message, 'The client lacks the scope sp2:read')
  t.match(customsOnly.headers['www-authenticate'], 'scope="sp2:read"')
  const sp2Only = await app.inject({ url: SHIPMENT, headers: { authorization: 'Bearer key-sp2' } })
  t.equal(sp2Only.json().message, 'The client lacks the scope customs:read')
  t.equal(sandbox.count(), 0)
  t.equal(
    (await app.inject({ url: SHIPMENT, headers: { authorization: 'Bearer key-both' } })).statusCode,
    200
  )
})

test('bad input is a 400 naming each field, and nothing reaches the hub', async (t) => {
  const { app, sandbox } = await build(t)
  const res = await app.inject({
    url: `/v1/shipments/${blNo}?npwp=123&blDate=2024-02-30&documentType=bc99`
  })
  t.equal(res.statusCode, 400)
  t.same(
    res
      .json()
      .details.map((d: { field: string }) => d.field)
      .sort(),
    ['query.blDate', 'query.documentType', 'query.npwp']
  )
  const missing = await app.inject({ url: `/v1/shipments/${blNo}?npwp=${npwp}&blDate=${blDate}` })
  t.match(missing.json().details, [{ field: 'query.documentType', rule: 'is required' }])
  t.equal(sandbox.count(), 0)
})
