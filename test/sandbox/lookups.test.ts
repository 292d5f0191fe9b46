import t from 'tap'
import { operationsOf } from '../../src/catalogue/operations.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import type { ContainerListFixture } from '../../src/sandbox/index.ts'
import { AUTH, LOOKUP, TOKEN, get, isRecord, qs, sandbox, segments } from './helpers.ts'

// Keys and parameters from the gateway's catalogue (not from the sandbox's
// own tables): the sandbox, a second reading of the hub, must agree with it.
const BL_LISTS = operationsOf('bl-list').map(
  (op) => [op.id, op.response.key, op.documentType.code] as const
)

const CONTAINER_LISTS = operationsOf('container-list').map(op => {
  const names = op.params.map(p => p.upstream)
  if (!names.every((n): n is 'noBl' | 'tglBl' => n === 'noBl' || n === 'tglBl')) {
    throw new Error(`${op.id}: ` + 'a parameter the sandbox fixtures do not have')
  }
  return [op.id, op.response.key, names] as const
})

const BL_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:00\.0$/

function paramsOf (
  fixture: ContainerListFixture,
  names: ReadonlyArray<'noBl' | 'tglBl'>
): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, fixture[n]]))
}

t.test(
  'BL lists answer under their catalogue keys, by query string and by path segment',
  async (t) => {
    const sb = await sandbox(t)
    for (const [operation, key, type] of BL_LISTS) {
      for (const taxpayer of [F.taxpayer, F.taxpayer16]) {
        const byQuery = await get(sb, `${LOOKUP}/${operation}/${qs({ npwp: taxpayer.npwp })}`)
        t.equal(byQuery.status, 200, `${operation} ${taxpayer.npwp}`)
        t.ok(byQuery.headers.get('content-type')?.startsWith('application/json'))
        t.same(Object.keys(byQuery.body as object), [key], `${operation} has only the key ${key}`)
        const entries = (byQuery.body as Record<string, unknown>)[key]
        t.same(
          entries,
          taxpayer[type].map((bl) => ({ bl_no: bl.blNo, bl_date: bl.blDateStamped }))
        )
        t.ok(Array.isArray(entries) && entries.length > 0, 'the taxpayer has BLs of this type')
        for (const entry of entries as Array<Record<string, unknown>>) {
          t.match(entry.bl_date, BL_DATE)
        }

        const byPath = await get(sb, `${LOOKUP}/${operation}/${taxpayer.npwp}`)
        t.equal(byPath.text, byQuery.text, `${operation}: path placement answers the same`)
        const trailing = await get(sb, `${LOOKUP}/${operation}/${taxpayer.npwp}/`)
        t.equal(trailing.text, byQuery.text, `${operation}: trailing slash optional`)
      }
    }
  }
)

t.test(
  'a BL list can be empty: the BC 1.6 list of one taxpayer, any list of an unknown NPWP',
  async (t) => {
    const sb = await sandbox(t)
    t.equal(F.taxpayerWithoutBc16.bc16.length, 0)
    const empty = await get(sb, `${LOOKUP}/noblbc16/${qs({ npwp: F.taxpayerWithoutBc16.npwp })}`)
    t.equal(empty.status, 200)
    t.same(empty.body, { 'Data BL BC 1.6': [] })
    const hasBc20 = await get(sb, `${LOOKUP}/noblbc20/${qs({ npwp: F.taxpayerWithoutBc16.npwp })}`)
    t.equal(
      (hasBc20.body as Record<string, unknown[]>)['Data BL BC 2.0']?.length,
      F.taxpayerWithoutBc16.bc20.length
    )
    const unknown = await get(sb, `${LOOKUP}/noblbc23/${F.unknownNpwp}`)
    t.same(unknown.body, { 'Data BL BC23': [] })
  }
)

t.test('a BL list without npwp is a 400 with a message', async (t) => {
  const sb = await sandbox(t)
  const res = await get(sb, `${LOOKUP}/noblbc20/`)
  t.equal(res.status, 400)
  t.ok(
    isRecord(res.body) && typeof res.body.message === 'string' && Object.keys(res.body).length === 1
  )
})

t.test(
  'container lists answer under their catalogue keys with valid items, in both placements',
  async (t) => {
    const sb = await sandbox(t)
    for (const [operation, key, names] of CONTAINER_LISTS) {
      const fixture = F.containers[operation]
      const params = paramsOf(fixture, names)
      const byQuery = await get(sb, `${LOOKUP}/${operation}/${qs(params)}`)
      t.equal(byQuery.status, 200, operation)
      t.same(Object.keys(byQuery.body as object), [key], `${operation} answers under ${key}`)
      const items = (byQuery.body as Record<string, Array<Record<string, unknown>>>)[key] ?? []
      t.ok(items.length > 0, `${operation} returns containers`)
      t.same(
        items.map((i) => i.no_kontainer),
        fixture.containerNos
      )
      for (const item of items) {
        t.same(Object.keys(item).sort(), [
          'jenis_kontainer',
          'no_bl',
          'no_kontainer',
          'tgl_bl',
          'ukuran_kontainer'
        ])
        t.match(item.tgl_bl, /^\d{4}-\d{2}-\d{2}$/)
        t.match(item.ukuran_kontainer, /^(20|40|45)$/)
        if (names.includes('noBl')) t.equal(item.no_bl, fixture.noBl)
        if (names.includes('tglBl')) t.equal(String(item.tgl_bl).replaceAll('-', ''), fixture.tglBl)
      }
      const byPath = await get(
        sb,
        `${LOOKUP}/${operation}${segments(...names.map((n) => fixture[n]))}`
      )
      t.equal(byPath.text, byQuery.text, `${operation}: path placement answers the same`)
    }
  }
)

t.test('container lists are empty (200) for an unknown BL or date', async (t) => {
  const sb = await sandbox(t)
  for (const [operation, key, names] of CONTAINER_LISTS) {
    const params: Record<string, string> = {}
    for (const n of names) params[n] = n === 'noBl' ? F.unknownBlNo : '20230101'
    const res = await get(sb, `${LOOKUP}/${operation}/${qs(params)}`)
    t.equal(res.status, 200, operation)
    t.same(res.body, { [key]: [] }, operation)
  }
})

t.test(
  'container lists check their parameters: missing one, or a date that is not 8 digits, is a 400',
  async (t) => {
    const sb = await sandbox(t)
    for (const [operation, , names] of CONTAINER_LISTS) {
      const full = paramsOf(F.containers[operation], names)
      for (const name of names) {
        const without = { ...full }
        delete without[name]
        const missing = await get(sb, `${LOOKUP}/${operation}/${qs(without)}`)
        t.equal(missing.status, 400, `${operation} without ${name}`)
        t.match(missing.body, { message: String })
      }
      if (names.includes('tglBl')) {
        for (const bad of ['2024-02-01', '2024021', 'abcdefgh']) {
          const res = await get(sb, `${LOOKUP}/${operation}/${qs({ ...full, tglBl: bad })}`)
          t.equal(res.status, 400, `${operation} tglBl=${bad}`)
        }
      }
    }
  }
)

t.test('an encoded slash stays inside its path segment', async (t) => {
  const sb = await sandbox(t)
  const res = await get(sb, `${LOOKUP}/kontainerbc261/MEDU%2F123`)
  t.equal(res.status, 200)
  t.same(res.body, { 'data kontainer bc 261': [] })
  t.equal(sb.requests[0]?.params.noBl, 'MEDU/123')
  const split = await get(sb, `${LOOKUP}/kontainerbc261/MEDU/123`)
  t.equal(split.status, 404, 'an unencoded slash makes one segment too many')
})

t.test(
  'path segments fill parameters in table order and the query string supplies the rest',
  async (t) => {
    const sb = await sandbox(t)
    const fixture = F.containers.kontainerbc23
    const mixed = await get(
      sb,
      `${LOOKUP}/kontainerbc23/${encodeURIComponent(fixture.noBl)}${qs({ tglBl: fixture.tglBl })}`
    )
    t.equal(mixed.status, 200)
    t.same(
      (mixed.body as Record<string, unknown[]>)['Data Kontainer BC16']?.length,
      fixture.containerNos.length
    )
    const tooMany = await get(sb, `${LOOKUP}/kontainerbc23/${fixture.noBl}/${fixture.tglBl}/extra`)
    t.equal(tooMany.status, 404)
  }
)

t.test('BC20ByNoPib answers one 2.8 record of strings', async (t) => {
  const sb = await sandbox(t)
  const { npwp, pibNo, blNo } = F.declaration
  const res = await get(sb, `${LOOKUP}/BC20ByNoPib/${qs({ npwp, nopib: pibNo })}`)
  t.equal(res.status, 200)
  t.ok(isRecord(res.body))
  const record = res.body as Record<string, unknown>
  t.same(Object.keys(record), [
    'tgl_bl',
    'nm_ff',
    'npwp_cargoowner',
    'tgl_sppb',
    'car',
    'no_pib',
    'no_sppb',
    'tgl_pib',
    'npwp_ff',
    'host_bl',
    'nm_cargoowner',
    'status'
  ])
  for (const [field, value] of Object.entries(record)) {
    t.type(value, 'string', `${field} is a ` +
    'string')
  }
  for (const field of ['tgl_bl', 'tgl_sppb', 'tgl_pib']) {
    t.match(record[field], /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d$/)
  }
  t.match(record, { no_pib: pibNo, npwp_cargoowner: npwp, host_bl: blNo, status: 'SPPB' })
  t.match(record.no_pib, /^\d{6}$/)
  t.match(record.car, /^\d{26}$/)

  const byPath = await get(sb, `${LOOKUP}/BC20ByNoPib/${npwp}/${pibNo}`)
  t.equal(byPath.text, res.text)
})

t.test('BC20ByNoPib answers 404 Data tidak ditemukan for an unknown PIB or NPWP', async (t) => {
  const sb = await sandbox(t)
  const unknownPib = await get(sb, `${LOOKUP}/BC20ByNoPib/${F.declaration.npwp}/${F.unknownPibNo}`)
  t.equal(unknownPib.status, 404)
  t.same(unknownPib.body, { message: 'Data tidak ditemukan' })
  const otherOwner = await get(
    sb,
    `${LOOKUP}/BC20ByNoPib/${F.taxpayer16.npwp}/${F.declaration.pibNo}`
  )
  t.equal(otherOwner.status, 404, 'a PIB belongs to its own taxpayer')
  const missing = await get(sb, `${LOOKUP}/BC20ByNoPib/${qs({ npwp: F.declaration.npwp })}`)
  t.equal(missing.status, 400)
})

t.test(
  'BC20ByNoBL answers an array of declarations of the BL, needing only Authorization',
  async (t) => {
    const sb = await sandbox(t)
    const { blNo, pibNos } = F.blWithTwoDeclarations
    t.equal(pibNos.length, 2)
    const res = await get(sb, `${LOOKUP}/BC20ByNoBL/${qs({ nobl: blNo })}`, TOKEN)
    t.equal(res.status, 200)
    t.ok(Array.isArray(res.body))
    t.same(
      (res.body as Array<Record<string, unknown>>).map((r) => r.no_pib),
      pibNos
    )
    for (const record of res.body as Array<Record<string, unknown>>) t.equal(record.host_bl, blNo)
    const byPath = await get(sb, `${LOOKUP}/BC20ByNoBL/${blNo}`, AUTH)
    t.equal(byPath.text, res.text)
    const unknown = await get(sb, `${LOOKUP}/BC20ByNoBL/${F.unknownBlNo}`, TOKEN)
    t.equal(unknown.status, 200)
    t.same(unknown.body, [])
  }
)
