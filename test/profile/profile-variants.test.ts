import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { at, scriptedHub, type Script } from '../fixtures/scripted-hub.ts'
import { build, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, writeTempFile } from '../helpers/helper.ts'

// Hub variants beyond the two shipped profiles, each said by a profile file
// of its own, against a real HTTP hub on port 0: the kinds of variation a
// hub may show (header names, prefixes, parameter orders, answer keys, error
// members, date forms), so that the gateway serves a hub neither shipped
// profile describes. The sandbox plays those it can.

const KEY = 'variant-key-5e1c9a27'
const TOKEN = 'variant-token-0b8d3f'
const NPWP = '012345678901000'

async function gateway (t: Parameters<typeof build>[0], profile: object, ...scripts: Script[]) {
  const hub = await scriptedHub(t, ...scripts)
  const file = writeTempFile(t, JSON.stringify({ name: 'variant', ...profile }))
  const built = await build(t, {
    env: {
      UPSTREAM_HUB_URL: `${hub.url}/hub`,
      UPSTREAM_BASE_URL: `${hub.url}/base`,
      UPSTREAM_API_KEY: KEY,
      UPSTREAM_ACCESS_TOKEN: TOKEN,
      UPSTREAM_PROFILE_FILE: file
    }
  })
  return { ...built, hub }
}

test('other header names, an empty prefix, another order of segments, a record under a key, ' +
  'another service', async (t) => {
  const { app, hub } = await gateway(
    t,
    {
      prefixes: { lookup: '' },
      defaults: { apiKeyHeader: 'x-hub-key', tokenHeader: 'Authentication' },
      operations: {
        BC20ByNoPib: {
          path: 'declarations/{nopib}/of/{npwp}',
          answerKey: 'result',
          service: 'base'
        },
        kontainerbc23: { path: 'kontainerbc23/{tglBl}/{noBl}', credentials: [] }
      }
    },
    at(`/base/declarations/350420/of/${NPWP}`, {
      body: { result: { no_pib: '350420', tgl_pib: '2024-01-02 00:00:00.0' } }
    }),
    at('/hub/kontainerbc23/20240201/MEDU1', { body: { 'Data Kontainer BC16': [] } })
  )
  const declaration = await app.inject({ url: `/v1/customs/bc20/declarations/350420?npwp=${NPWP}` })
  t.equal(declaration.statusCode, 200, declaration.body)
  t.same(declaration.json().data, {
    pibNo: '350420',
    pibDate: '2024-01-02',
    pibDateTime: '2024-01-02T00:00:00.0+07:00'
  })
  t.equal(hub.requests[0]?.headers['x-hub-key'], KEY)
  t.equal(hub.requests[0]?.headers.authentication, TOKEN)
  t.notOk('authorization' in (hub.requests[0]?.headers ?? {}))
  const containers = await app.inject({
    url: '/v1/customs/bc23/containers?blNo=MEDU1&blDate=2024-02-01'
  })
  t.equal(containers.statusCode, 200, containers.body)
  t.notOk('x-hub-key' in (hub.requests[1]?.headers ?? {}), 'no credentials, as the profile says')
  t.notOk('authentication' in (hub.requests[1]?.headers ?? {}))
})

test('days answered alone in the documented fast path; several records under the only array; a ' +
  'failure status in its own member', async (t) => {
  const {
    app,
    app: { metrics }
  } = await gateway(
    t,
    {
      defaults: { dateAnswered: 'YYYYMMDD', errorFields: ['error.detail', 'message'] },
      operations: {
        BC20ByNoBL: {
          answerKey: '*',
          failure: { statusCodeField: 'code', messageWithoutData: true }
        }
      }
    },
    at('/hub/V1/HUB/INT/AUTH/noblbc20/', {
      body: {
        'Data BL BC 2.0': [
          { bl_no: 'A1', bl_date: '20240423' },
          { bl_no: 'A2', bl_date: '2024-04-24 03:20:00.0' }
        ]
      }
    }),
    at('/hub/V1/HUB/INT/AUTH/BC20ByNoBL/', (request) =>
      request.query.nobl === 'GONE'
        ? { body: { code: 404, error: { detail: 'BL tidak ditemukan' } } }
        : { body: { meta: 'x', rows: [{ no_pib: '1' }, { no_pib: '2' }] } }
    ),
    at('/hub/V1/HUB/INT/AUTH/noblbc16/', { status: 400, body: { error: { detail: 'npwp salah' } } })
  )
  const list = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${NPWP}` })
  t.equal(list.statusCode, 200, list.body)
  t.same(
    list.json().data,
    [
      { blNo: 'A1', blDate: '2024-04-23' },
      { blNo: 'A2', blDate: '2024-04-24', blDateTime: '2024-04-24T03:20:00.0+07:00' }
    ],
    'the day alone: no time; a time where the hub sent one'
  )
  const slow = await metrics.registry.getSingleMetric('gateway_upstream_slow_path_total')?.get()
  t.same(slow?.values, [], 'read by the fast path: the day alone is no reason to give up')
  const records = await app.inject({ url: '/v1/customs/bc20/declarations?blNo=MEDU1' })
  t.equal(records.statusCode, 200, records.body)
  t.same(
    records.json().data.map((d: { pibNo: string }) => d.pibNo),
    ['1', '2']
  )
  const gone = await app.inject({ url: '/v1/customs/bc20/declarations?blNo=GONE' })
  t.equal(gone.statusCode, 404, 'the status the failure names')
  t.match(gone.json(), { code: 'UPSTREAM_NOT_FOUND', upstreamMessage: 'BL tidak ditemukan' })
  const refused = await app.inject({ url: `/v1/customs/bc16/bills-of-lading?npwp=${NPWP}` })
  t.match(
    refused.json(),
    { code: 'UPSTREAM_REJECTED', upstreamMessage: 'npwp salah' },
    'error text at a dotted path'
  )
})

test('an Oracle-backed hub\'s DD-MON-YY days, as the sandbox plays them: the day', async (t) => {
  const profile = { name: 'oracle', defaults: { dateAnswered: 'DD-MON-YY' } }
  const file = writeTempFile(t, JSON.stringify(profile))
  const { app, sandbox } = await build(t, {
    sandbox: { profile: file },
    env: { UPSTREAM_PROFILE_FILE: file }
  })
  const { npwp, bc20 } = F.taxpayer
  const raw = await fetch(`${sandbox.url}/V1/HUB/INT/AUTH/noblbc20/?npwp=${npwp}`, {
    headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
  })
  const answer = await raw.json() as Record<string, Array<{ bl_date: string }>>
  const sent = answer['Data BL BC 2.0'] ?? []
  t.ok(sent.length > 0 && sent.every(bl => /^\d{2}-[A-Z]{3}-\d{2}$/.test(bl.bl_date)),
    `the sandbox answers as the profile says: ${sent[0]?.bl_date}`)
  const res = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${npwp}` })
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json().data, bc20.map(bl => ({ blNo: bl.blNo, blDate: bl.blDate })), 'no date-time')
  const drift = await app.metrics.registry.getSingleMetric('gateway_hub_drift_total')?.get()
  t.same(drift?.values.map(v => [v.labels.kind, v.value]), [['date-form', 1]], 'a date form')
})

test('a value no form reads is left out, counted; each drift line has its details', async (t) => {
  const AUTH = '/hub/V1/HUB/INT/AUTH'
  const { app, logs } = await gateway(t, {},
    at(`${AUTH}/noblbc20/`, {
      body: {
        'BL List': [
          { bl_no: 'A1', bl_date: '21-MAY-23' },
          { bl_no: 'A2', bl_date: '2024-04-24 03:20:00.0' }
        ]
      }
    }),
    at(`${AUTH}/BC20ByNoPib/`, {
      body: { no_pib: '350420', tgl_pib: '2024-01-02 00:00:00.0', tgl_sppb: '31-APR-23', status: 7 }
    }),
    at(`${AUTH}/noblbc16/`, {
      body: { 'Data BL BC 1.6': [{ bl_no: 'A1', bl_date: '2024-02-30' }] }
    })
  )
  const list = await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${NPWP}` })
  t.equal(list.statusCode, 200, list.body)
  t.same(list.json().data, [
    { blNo: 'A1', blDate: '2023-05-21', blDateTime: '2023-05-21T00:00:00+07:00' },
    { blNo: 'A2', blDate: '2024-04-24', blDateTime: '2024-04-24T03:20:00.0+07:00' }
  ], '21-MAY-23 read as the day it says')
  const lines = (kind: string) => logs.filter(line => line.drift === kind)
  t.match(lines('answer-key'), [{ expectedKey: 'Data BL BC 2.0', actualKey: 'BL List' }])
  t.equal(lines('date-form').length, 1)
  const [dateForm] = lines('date-form')
  t.notOk(dateForm === undefined || 'expectedKey' in dateForm || 'actualKey' in dateForm, 'no keys')
  const declaration = await app.inject({ url: `/v1/customs/bc20/declarations/350420?npwp=${NPWP}` })
  t.equal(declaration.statusCode, 200, declaration.body)
  t.same(declaration.json().data, {
    pibNo: '350420', pibDate: '2024-01-02', pibDateTime: '2024-01-02T00:00:00.0+07:00', status: '7'
  }, 'a day the calendar has not: left out (sppbDate, sppbDateTime)')
  t.match(lines('invalid-value'), [{ operation: 'BC20ByNoPib', msg: /cannot hold/ }])
  const bl = await app.inject({ url: `/v1/customs/bc16/bills-of-lading?npwp=${NPWP}` })
  t.match(bl.json(), { statusCode: 502, code: 'UPSTREAM_BAD_RESPONSE' }, 'a BL date, no day')
  const drift = await app.metrics.registry.getSingleMetric('gateway_hub_drift_total')?.get()
  const refused = drift?.values.filter(v => v.labels.kind === 'invalid-value')
  t.same(refused?.map(v => [v.labels.operation, v.value]), [['BC20ByNoPib', 1]])
})
