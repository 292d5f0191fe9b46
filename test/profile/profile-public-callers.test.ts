import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { at, scriptedHub, type Script } from '../fixtures/scripted-hub.ts'
import { build } from '../helpers/helper.ts'

// The gateway with the public-callers profile (deploy/profiles/public-callers.json)
// against a real HTTP hub on port 0 that answers as that profile describes the
// hub: its addresses, header names, stringified values, error shapes and 2xx
// failures. (The sandbox plays the documented hub; the suite against both
// profiles on the sandbox is the sandbox's.)

const PROFILE = fileURLToPath(new URL('../../deploy/profiles/public-callers.json', import.meta.url))
const KEY = 'pc-api-key-2b9f4e71c3'
const TOKEN = 'Bearer pc-access-token-8d2a6c'
const NPWP = '012345678901000'
const SP2_ID = 'b574cfab-cbef-4bd7-891b-49ff41d85755'

async function gateway (t: Parameters<typeof build>[0], ...scripts: Script[]) {
  const hub = await scriptedHub(t, ...scripts)
  const built = await build(t, {
    env: {
      UPSTREAM_HUB_URL: hub.url,
      UPSTREAM_BASE_URL: hub.url,
      UPSTREAM_API_KEY: KEY,
      UPSTREAM_ACCESS_TOKEN: TOKEN,
      UPSTREAM_PROFILE_FILE: PROFILE
    }
  })
  return { ...built, hub }
}

async function driftCount (
  app: Awaited<ReturnType<typeof build>>['app'],
  operation: string,
  kind: string
): Promise<number> {
  const metric = await app.metrics.registry.getSingleMetric('gateway_hub_drift_total')?.get()
  return (
    metric?.values.find((v) => v.labels.operation === operation && v.labels.kind === kind)?.value ??
    0
  )
}

test('a BL list: the V1/NLE address with the taxpayer as a path segment, beacukai-api-key, a ' +
  'bearer token; its day without a time, under any key', async (t) => {
  const { app, hub, logs } = await gateway(
    t,
    at(`/V1/NLE/INT/AUTH/noblbc20/${NPWP}`, {
      body: { 'Data BL BC 20': [{ bl_no: 'MEDU1234567', bl_date: '2024-04-23' }] }
    })
  )
  const res = await app.inject({
    url: '/v1/customs/bc20/bills-of-lading?npwp=01.234.567.8-901.000'
  })
  t.equal(res.statusCode, 200, res.body)
  t.same(
    res.json().data,
    [{ blNo: 'MEDU1234567', blDate: '2024-04-23' }],
    'the day, and no time the hub never said'
  )
  const sent = hub.requests[0]!
  t.equal(sent.method, 'GET')
  t.same(sent.query, {}, 'no query string: the taxpayer is in the path')
  t.equal(sent.headers['beacukai-api-key'], KEY)
  t.equal(sent.headers.authorization, TOKEN)
  t.notOk('customs-api-key' in sent.headers, 'not the documented header name')
  t.equal(
    await driftCount(app, 'noblbc20', 'answer-key'),
    1,
    "another key than the document's: counted"
  )
  t.equal(await driftCount(app, 'noblbc20', 'date-form'), 1)
  t.ok(
    logs.some(
      (l) =>
        l.msg === 'upstream response key drift' &&
        l.actualKey === 'Data BL BC 20' &&
        l.expectedKey === 'Data BL BC 2.0'
    ),
    'logged with both keys'
  )
})

test('BC20ByNoBL: its own prefix and ordered segments; the route takes what the hub needs, and ' +
  'refuses a / that would become a segment', async (t) => {
  const record = {
    no_pib: '350420',
    car: '000000-000000-20240101-000001',
    status: 'SPPB',
    tgl_pib: '2024-01-02',
    tgl_bl: '2024-01-01',
    npwp_cargoowner: NPWP
  }
  const { app, hub } = await gateway(
    t,
    at(`/NLEMICROAPI-1.0/webresources/ceisa/BC20ByNoBL/${NPWP}/MEDU1234567/20240101`, {
      body: { status: 'success', message: 'Data ditemukan', data: [record] }
    })
  )
  const res = await app.inject({
    url: `/v1/customs/bc20/declarations?blNo=MEDU1234567&npwp=${NPWP}&blDate=2024-01-01`
  })
  t.equal(res.statusCode, 200, res.body)
  t.same(
    res.json().data.map((d: { pibNo: string; status: string }) => [d.pibNo, d.status]),
    [['350420', 'SPPB']],
    "the record's own status is not the answer's"
  )
  t.equal(hub.requests.length, 1)

  const missing = await app.inject({ url: '/v1/customs/bc20/declarations?blNo=MEDU1234567' })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json().code, 'VALIDATION_FAILED')
  t.match(
    missing.json().details.map((d: { field: string }) => d.field),
    ['query.npwp', 'query.blDate']
  )
  const slash = await app.inject({
    url: `/v1/customs/bc20/declarations?blNo=MEDU%2F123&npwp=${NPWP}&blDate=2024-01-01`
  })
  t.equal(slash.statusCode, 400, 'a / in a value the hub takes as a path segment')
  t.match(slash.json().details, [{ field: 'query.blNo' }])
  t.equal(hub.requests.length, 1, 'refused before any hub call')
})

test('kontainerbc20 as kontainerbc20All/{noBl}/{tglBl}: the route takes the BL number ' +
  'too', async (t) => {
  const { app, hub } = await gateway(
    t,
    at('/V1/NLE/INT/AUTH/kontainerbc20All/MEDU1234567/20240217', {
      body: {
        data: [
          {
            no_kontainer: 'TCLU6470801',
            ukuran_kontainer: '40',
            jenis_kontainer: 'DRY',
            no_bl: 'MEDU1234567',
            tgl_bl: '2024-02-17'
          }
        ]
      }
    })
  )
  const res = await app.inject({
    url: '/v1/customs/bc20/containers?blNo=MEDU1234567&blDate=2024-02-17'
  })
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json().data, [
    {
      containerNo: 'TCLU6470801',
      containerSize: '40',
      containerType: 'DRY',
      blNo: 'MEDU1234567',
      blDate: '2024-02-17'
    }
  ])
  t.equal(hub.requests[0]?.path, '/V1/NLE/INT/AUTH/kontainerbc20All/MEDU1234567/20240217')
  const doc = app.swagger() as {
    paths: Record<
      string,
      { get: { parameters: Array<{ name: string; in: string; required: boolean }> } }
    >
  }
  // The query's parameters (If-None-Match, a header, is every lookup's).
  t.same(
    doc.paths['/v1/customs/bc20/containers']?.get.parameters
      .filter((p) => p.in === 'query')
      .map((p) => [p.name, p.required]),
    [
      ['blNo', true],
      ['blDate', true]
    ],
    'the served document says so'
  )
})

test('SP2 documents: nle-api-key, the documented query string, every value a string, "null" for ' +
  'null', async (t) => {
  const document = {
    id_document_sp2: SP2_ID,
    request_date: '2024-02-20 10:00:00',
    terminal: 'null',
    price: '1500000.50',
    party: '2',
    is_finished: '1',
    url: 'null',
    payment_url: '',
    id_document: '100001',
    id_ff_ppjk: 'null',
    td_document: {
      id_document: '100001',
      kd_document_type: '1',
      finish_do: '1',
      finish_trucking: '0',
      finish_sp2: '1',
      finish_warehouse: '0',
      finish_depo: '0',
      do_number: 'null',
      do_date: 'null',
      mst_document_type: {
        kd_document_type: '1',
        kd_process_type: '1',
        mst_process_type: { kd_process_type: '1', process_name: 'Impor' }
      },
      user_document: []
    },
    mst_platform: {
      id_platform: 'PLT1',
      no_rekening: 'null',
      npwp: 'null',
      app_url: '',
      kode_kantor: 'null',
      mst_kantor: 'null',
      mstPlatformServices: []
    },
    container: [
      {
        id_sp2_container: '300001',
        container_no: 'TCLU6470801',
        container_size: '40',
        container_type: '45R1',
        gate_pass: 'null'
      }
    ],
    sp2_log: []
  }
  const { app, hub, logs } = await gateway(
    t,
    at('/nlesp2/v1/document_sp2/host-to-host/', {
      body: { status: 'Success.', message: '', data: [document] }
    })
  )
  const url = `/v1/sp2/documents?npwp=${NPWP}&blNo=MEDU1234567&blDate=2024-02-17`
  const res = await app.inject({ url })
  t.equal(res.statusCode, 200, res.body)
  const [doc] = res.json().data
  t.equal(doc.price, 1500000.5)
  t.equal(doc.containerCount, 2)
  t.equal(doc.finished, true)
  t.equal(doc.customsDocumentId, 100001)
  t.equal(doc.documentUrl, null, 'a field that may be null: null')
  t.equal(doc.paymentUrl, null, 'the empty string too')
  t.notOk('terminal' in doc, 'a field that may not be null: left out')
  t.same(
    doc.platform,
    {
      platformId: 'PLT1',
      bankAccountNo: null,
      npwp: null,
      appUrl: null,
      officeCode: null,
      office: null,
      services: []
    },
    'required fields that may be null: null'
  )
  t.same(doc.containers, [
    {
      sp2ContainerId: 300001,
      containerNo: 'TCLU6470801',
      containerSize: '40',
      isoSizeTypeCode: '45R1',
      gatePass: null
    }
  ])
  const sent = hub.requests[0]!
  t.same(sent.query, { npwp_cargo_owner: NPWP, bl_no: 'MEDU1234567', bl_date: '20240217' })
  t.equal(sent.headers['nle-api-key'], KEY)
  t.notOk('beacukai-api-key' in sent.headers)
  await app.inject({ url })
  for (const kind of ['number-string', 'flag-string', 'null-string']) {
    t.equal(
      await driftCount(app, 'document_sp2/host-to-host', kind),
      2,
      `${kind}: counted each time`
    )
  }
  t.equal(
    logs.filter((l) => l.operation === 'document_sp2/host-to-host' && l.drift === 'null-string')
      .length,
    1,
    'logged once per operation and kind'
  )
})

test('a null string where a required field may not be null is not the documented shape: ' +
  'UPSTREAM_BAD_RESPONSE', async (t) => {
  const { app } = await gateway(
    t,
    at(`/V1/NLE/INT/AUTH/noblbc20/${NPWP}`, {
      body: { 'Data BL BC 2.0': [{ bl_no: 'MEDU1234567', bl_date: 'null' }] }
    }),
    at(`/V1/NLE/INT/AUTH/noblbc23/${NPWP}`, {
      body: { 'Data BL BC23': [{ bl_no: 'MEDU1234567', bl_date: '' }] }
    }),
    at(`/V1/NLE/INT/AUTH/noblbc16/${NPWP}`, {
      body: {
        'Data BL BC 1.6': [{ bl_no: 'MEDU1234567', bl_date: '2024-04-23', 'Kode Kantor': 'null' }]
      }
    })
  )
  for (const type of ['bc20', 'bc23']) {
    const res = await app.inject({ url: `/v1/customs/${type}/bills-of-lading?npwp=${NPWP}` })
    t.equal(res.statusCode, 502, `${type}: ${res.body}`)
    t.equal(res.json().code, 'UPSTREAM_BAD_RESPONSE')
  }
  const ok = await app.inject({ url: `/v1/customs/bc16/bills-of-lading?npwp=${NPWP}` })
  t.same(
    ok.json().data,
    [{ blNo: 'MEDU1234567', blDate: '2024-04-23', hubExtra: { kodeKantor: 'null' } }],
    "a field of the hub's own beyond the documented ones: under hubExtra, as sent"
  )
})

test('a 2xx answer that reports a failure is that failure, not an empty list', async (t) => {
  const { app } = await gateway(
    t,
    at(`/V1/NLE/INT/AUTH/noblbc16/${NPWP}`, {
      body: { status: 'failed', message: 'API key is not valid or is expired / revoked.' }
    }),
    at(`/V1/NLE/INT/AUTH/noblbc23/${NPWP}`, { body: { message: 'Data tidak ditemukan' } }),
    at(`/V1/NLE/INT/AUTH/noblbc20/${NPWP}`, {
      body: { status: 'error', message: `tanggal tidak valid for key ${KEY}` }
    }),
    at(`/V1/NLE/INT/AUTH/BC20ByNoPib/${NPWP}/350420`, {
      body: { status: 'gagal', error: 'Something went wrong. Please try again later.' }
    })
  )
  const auth = await app.inject({ url: `/v1/customs/bc16/bills-of-lading?npwp=${NPWP}` })
  t.equal(auth.statusCode, 502)
  t.match(auth.json(), {
    code: 'UPSTREAM_AUTH_FAILED',
    upstreamMessage: 'API key is not valid or is expired / revoked.'
  })
  const empty = await app.inject({ url: `/v1/customs/bc23/bills-of-lading?npwp=${NPWP}` })
  t.equal(empty.statusCode, 200, 'no data: an empty list')
  t.same(empty.json().data, [])
  const rejected = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${NPWP}` })
  t.equal(rejected.statusCode, 422)
  t.match(
    rejected.json(),
    { code: 'UPSTREAM_REJECTED', upstreamMessage: 'tanggal tidak valid for key [redacted]' },
    'the text passed on, the key scrubbed out'
  )
  const down = await app.inject({ url: `/v1/customs/bc20/declarations/350420?npwp=${NPWP}` })
  t.equal(down.statusCode, 502)
  t.match(
    down.json(),
    {
      code: 'UPSTREAM_UNAVAILABLE',
      upstreamMessage: 'Something went wrong. Please try again later.'
    },
    'the text from `error`'
  )
  for (const op of ['noblbc16', 'noblbc23', 'noblbc20', 'BC20ByNoPib']) {
    t.equal(await driftCount(app, op, 'failure-2xx'), 1, op)
  }
})

test("error text from `error` as well as `message`; a record's own status is never taken for the " +
  "answer's", async (t) => {
  const record = { no_pib: '350420', status: 'SPPB', tgl_pib: '2024-01-02 00:00:00.0' }
  const { app } = await gateway(
    t,
    at(`/V1/NLE/INT/AUTH/BC20ByNoPib/${NPWP}/350420`, { body: record }),
    at(`/V1/NLE/INT/AUTH/BC20ByNoPib/${NPWP}/350421`, {
      status: 403,
      body: { error: 'API key is not valid or is expired / revoked.' }
    })
  )
  const ok = await app.inject({ url: `/v1/customs/bc20/declarations/350420?npwp=${NPWP}` })
  t.equal(ok.statusCode, 200, ok.body)
  t.match(ok.json().data, {
    pibNo: '350420',
    status: 'SPPB',
    pibDate: '2024-01-02',
    pibDateTime: '2024-01-02T00:00:00.0+07:00'
  })
  const refused = await app.inject({ url: `/v1/customs/bc20/declarations/350421?npwp=${NPWP}` })
  t.equal(refused.statusCode, 502)
  t.match(refused.json(), {
    code: 'UPSTREAM_AUTH_FAILED',
    upstreamMessage: 'API key is not valid or is expired / revoked.'
  })
  t.equal(await driftCount(app, 'BC20ByNoPib', 'error-field'), 1)
})

test('writes: trucking under /nletrucking/v1, the offer sends the key under both names, the ' +
  'booked notification keeps its query string, Success. is a success', async (t) => {
  const { app, hub } = await gateway(
    t,
    at(
      '/nletrucking/v1/DetilBooking/',
      { body: { status: 'Success.', message: 'Penawaran tersimpan' } },
      'POST'
    ),
    at(
      '/nletrucking/v1/DetilBooking/isBooked/',
      { body: { status: 'Success.', message: 'Booked' } },
      'POST'
    ),
    at(
      '/nlesp2/v1/document_sp2/final/',
      { body: { status: 'failed', message: 'Dokumen tidak ditemukan' } },
      'POST'
    )
  )
  const offer = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
  })
  t.equal(offer.statusCode, 200, offer.body)
  t.match(offer.json().data, {
    bookingRequestId: F.bookingRequestId,
    upstreamMessage: 'Penawaran tersimpan'
  })
  t.equal(hub.requests[0]?.headers['nle-api-key'], KEY)
  t.equal(hub.requests[0]?.headers['beacukai-api-key'], KEY, 'two names at once')
  const booked = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true }
  })
  t.equal(booked.statusCode, 200, booked.body)
  t.same(hub.requests[1]?.query, { idRequestBooking: F.bookingRequestId })
  t.equal(hub.requests[1]?.headers['nle-api-key'], KEY)
  const final = await app.inject({
    method: 'POST',
    url: `/v1/sp2/documents/${SP2_ID}/finalization`
  })
  t.equal(
    final.statusCode,
    404,
    'a failure whose text says not found, on a write: UPSTREAM_NOT_FOUND'
  )
  t.match(final.json(), { code: 'UPSTREAM_NOT_FOUND', upstreamMessage: 'Dokumen tidak ditemukan' })
})

test('/health/ready and the start-up log show the profile in force; the log holds no ' +
  'secret', async (t) => {
  const { app, rawLogs, logs } = await gateway(t)
  const ready = await app.inject({ url: '/health/ready' })
  t.match(ready.json().data.profile, {
    name: 'public-callers',
    source: 'public-callers.json',
    digest: /^[0-9a-f]{16}$/
  })
  const line = logs.find(
    (l) => typeof l.msg === 'string' && l.msg.startsWith('hub profile in force: public-callers')
  )
  t.ok(line, 'one short line at start-up')
  const { digest } = ready.json().data.profile
  t.match(line, { level: 30, profile: 'public-callers', source: /public-callers\.json$/, digest })
  t.ok(JSON.stringify(line).length < 400, 'short: the whole profile is at debug')
  const whole = logs.find((l) => l.msg === 'hub profile in force, whole')
  const BC20ByNoBL = {
    path: 'BC20ByNoBL/{npwp}/{blNumber}/{blDate}',
    prefix: '/NLEMICROAPI-1.0/webresources/ceisa'
  }
  t.match(whole, { level: 20, profile: { name: 'public-callers', operations: { BC20ByNoBL } } })
  const all = rawLogs.join('\n')
  t.notMatch(all, KEY)
  t.notMatch(all, 'pc-access-token')
})
