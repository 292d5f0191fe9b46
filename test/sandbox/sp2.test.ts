import t from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { AUTH, DEV, KEY, TOKEN, V3, get, iso6346Valid, isRecord, post, qs, sandbox, segments } from './helpers.ts'

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const FLAG = [0, 1]

type Doc = Record<string, any>

/** Checks one document against docs/reference/glossary.md#resources; returns the problems. */
function problems (doc: Doc): string[] {
  const out: string[] = []
  const expect = (ok: boolean, what: string): void => { if (!ok) out.push(what) }
  const nullableString = (v: unknown): boolean => v === null || typeof v === 'string'
  expect(UUID.test(doc.id_document_sp2), 'id_document_sp2 uuid')
  expect(DATETIME.test(doc.request_date), 'request_date datetime')
  for (const f of ['id_platform', 'terminal', 'proforma', 'status']) expect(typeof doc[f] === 'string', `${f} string`)
  for (const f of ['paid_thrud_date', 'proforma_date']) expect(DATE.test(doc[f]), `${f} date`)
  expect(typeof doc.price === 'number' && /^\d+\.\d{2}$/.test(String(doc.price)), 'price with two decimals')
  expect(Number.isInteger(doc.party) && doc.party === doc.container.length, 'party counts containers')
  expect(FLAG.includes(doc.is_finished), 'is_finished flag')
  expect((doc.status === 'Finish') === (doc.is_finished === 1), 'Finish iff is_finished')
  for (const f of ['id_ff_ppjk', 'url', 'payment_url']) expect(f in doc && nullableString(doc[f]), `${f} nullable`)
  expect(Number.isInteger(doc.id_document) && doc.id_document === doc.td_document?.id_document, 'id_document equals td_document.id_document')

  const td = doc.td_document ?? {}
  for (const f of ['id_document', 'kd_document_type']) expect(Number.isInteger(td[f]), `td.${f} integer`)
  for (const f of ['document_date', 'bl_date', 'tanggal_sppb']) expect(DATE.test(td[f]), `td.${f} date`)
  for (const f of ['finish_do', 'finish_trucking', 'finish_sp2', 'finish_warehouse', 'finish_depo']) expect(FLAG.includes(td[f]), `td.${f} flag`)
  for (const f of ['document_no', 'document_status', 'nm_cargoowner', 'no_sppb', 'npwp_cargo_owner', 'bl_no']) expect(typeof td[f] === 'string', `td.${f} string`)
  for (const f of ['do_number', 'do_date']) expect(f in td && nullableString(td[f]), `td.${f} nullable`)
  const type = td.mst_document_type ?? {}
  expect(Number.isInteger(type.kd_document_type) && Number.isInteger(type.kd_process_type), 'document type codes')
  expect(typeof type.document_name === 'string' && typeof type.description === 'string', 'document type names')
  expect(typeof type.containerAPI === 'string' && type.containerAPI.includes('/INT/AUTH/kontainer'), 'containerAPI address')
  expect(Number.isInteger(type.mst_process_type?.kd_process_type) && typeof type.mst_process_type?.process_name === 'string', 'mst_process_type')
  expect(Array.isArray(td.user_document) && td.user_document.length > 0, 'user_document list')
  for (const u of td.user_document ?? []) {
    expect(Number.isInteger(u.id_user_document) && typeof u.npwp === 'string' && typeof u.name === 'string', 'user_document ids')
    for (const f of ['access_do', 'access_sp2', 'access_trucking', 'access_warehouse', 'access_depo', 'access_domestic', 'is_ppjk']) {
      expect(FLAG.includes(u[f]), `user_document.${f} flag`)
    }
  }

  const p = doc.mst_platform ?? {}
  expect(p.id_platform === doc.id_platform, 'platform matches id_platform')
  for (const f of ['id_platform', 'nama_platform', 'company', 'tc_url', 'payment_url', 'live_tracking_url', 'logo_platform']) expect(typeof p[f] === 'string', `platform.${f}`)
  for (const f of ['publication_date', 'publication_date_updated']) expect(DATETIME.test(p[f]), `platform.${f} datetime`)
  for (const f of ['no_rekening', 'npwp', 'app_url', 'kode_kantor', 'mst_kantor']) expect(f in p && nullableString(p[f]), `platform.${f} nullable`)
  expect(Array.isArray(p.mstPlatformServices) && p.mstPlatformServices.every(isRecord), 'mstPlatformServices objects')

  expect(Array.isArray(doc.container) && doc.container.length > 0, 'containers')
  for (const c of doc.container ?? []) {
    expect(Number.isInteger(c.id_sp2_container), 'id_sp2_container')
    expect(iso6346Valid(c.container_no), `container_no ${c.container_no} ISO 6346`)
    expect(typeof c.container_size === 'string' && typeof c.container_type === 'string', 'size and type')
    expect('gate_pass' in c && nullableString(c.gate_pass), 'gate_pass nullable string')
  }
  expect(Array.isArray(doc.sp2_log) && doc.sp2_log.length > 0, 'logs')
  for (const l of doc.sp2_log ?? []) {
    expect(Number.isInteger(l.id_sp2_log) && l.id_document_sp2 === doc.id_document_sp2, 'log ids')
    expect(DATETIME.test(l.create_date) && typeof l.status === 'string', 'log date and status')
  }
  return out
}

const hostToHost = (prefix: string, npwp: string, blNo: string, blDate: string): string =>
  `${prefix}/document_sp2/host-to-host/${qs({ npwp_cargo_owner: npwp, bl_no: blNo, bl_date: blDate })}`

t.test('host-to-host answers complete SP2 documents under both prefixes and both placements', async (t) => {
  const sb = await sandbox(t)
  const { npwp, blNo, blDateCompact } = F.sp2
  const res = await get(sb, hostToHost(DEV, npwp, blNo, blDateCompact))
  t.equal(res.status, 200)
  t.ok(Array.isArray(res.body))
  const docs = res.body as Doc[]
  t.same(docs.map((d) => d.id_document_sp2), F.sp2.documentIds)
  t.equal(docs.length, 2)
  for (const doc of docs) {
    t.same(problems(doc), [], `document ${String(doc.id_document_sp2)} follows 2.1`)
    t.match(doc.td_document, { npwp_cargo_owner: npwp, bl_no: blNo, bl_date: F.sp2.blDate })
  }
  t.equal(docs[0]?.id_document, F.sp2.idDocument)

  t.equal((await get(sb, hostToHost(V3, npwp, blNo, blDateCompact))).text, res.text, 'production prefix')
  t.equal((await get(sb, `${DEV}/document_sp2/host-to-host${segments(npwp, blNo, blDateCompact)}`)).text, res.text, 'path segments')
  t.equal((await get(sb, `${V3}/document_sp2/host-to-host${segments(npwp, blNo, blDateCompact)}/`)).text, res.text, 'path segments, V3, trailing slash')
})

t.test('every seeded SP2 document follows 2.1, and gate_pass takes all three forms', async (t) => {
  const sb = await sandbox(t)
  const gatePasses = new Set<string>()
  let count = 0
  for (const taxpayer of [F.taxpayer, F.taxpayer16, F.taxpayerWithoutBc16]) {
    for (const bl of [...taxpayer.bc20, ...taxpayer.bc23]) {
      const res = await get(sb, hostToHost(DEV, taxpayer.npwp, bl.blNo, bl.blDateCompact))
      t.equal(res.status, 200)
      const docs = res.body as Doc[]
      t.ok(docs.length > 0, `${bl.blNo} has SP2 documents`)
      for (const doc of docs) {
        count++
        t.same(problems(doc), [], String(doc.id_document_sp2))
        for (const c of doc.container) gatePasses.add(c.gate_pass === null ? 'null' : c.gate_pass === '' ? 'empty' : 'text')
        const size = JSON.stringify(doc).length
        t.ok(size > 1500 && size < 3500, `about 2 KB (${size})`)
      }
    }
  }
  t.ok(count >= 10)
  t.same([...gatePasses].sort(), ['empty', 'null', 'text'])
})

t.test('host-to-host answers [] for an unknown owner, BL or date, and 400 for bad parameters', async (t) => {
  const sb = await sandbox(t)
  const { npwp, blNo, blDateCompact } = F.sp2
  for (const path of [
    hostToHost(DEV, F.unknownNpwp, blNo, blDateCompact),
    hostToHost(DEV, npwp, F.unknownBlNo, blDateCompact),
    hostToHost(DEV, npwp, blNo, '20200101'),
    hostToHost(DEV, F.taxpayer16.npwp, blNo, blDateCompact)
  ]) {
    const res = await get(sb, path)
    t.equal(res.status, 200, path)
    t.same(res.body, [], path)
  }
  const missing = await get(sb, `${DEV}/document_sp2/host-to-host/${qs({ npwp_cargo_owner: npwp, bl_no: blNo })}`)
  t.equal(missing.status, 400)
  t.match(missing.body, { message: /bl_date/ })
  const badDate = await get(sb, hostToHost(DEV, npwp, blNo, F.sp2.blDate))
  t.equal(badDate.status, 400, 'bl_date must be YYYYMMDD')
})

t.test('cargo-owner containers: 2.6 records plus id_document_sp2, filtered by all four parameters', async (t) => {
  const sb = await sandbox(t)
  const { npwp, blNo, blDateCompact, containerNo, sp2Id } = F.sp2
  const params = { bl_date: blDateCompact, container_no: containerNo, npwp_cargo_owner: npwp, bl_no: blNo }
  const res = await get(sb, `${DEV}/document_sp2_container/cargo_owner/${qs(params)}`)
  t.equal(res.status, 200)
  t.ok(Array.isArray(res.body))
  const records = res.body as Doc[]
  t.equal(records.length, 1)
  t.same(Object.keys(records[0] ?? {}), ['id_sp2_container', 'container_no', 'container_size', 'container_type', 'gate_pass', 'id_document_sp2'])
  t.match(records[0], { container_no: containerNo, id_document_sp2: sp2Id, id_sp2_container: Number })

  // The order of docs/hub.md#operations: bl_date, container_no, npwp_cargo_owner, bl_no
  const byPath = await get(sb, `${V3}/document_sp2_container/cargo_owner${segments(blDateCompact, containerNo, npwp, blNo)}`)
  t.equal(byPath.text, res.text)

  const other = await get(sb, `${DEV}/document_sp2_container/cargo_owner/${qs({ ...params, container_no: 'MSCU1234565' })}`)
  t.same(other.body, [])
  const wrongOwner = await get(sb, `${DEV}/document_sp2_container/cargo_owner/${qs({ ...params, npwp_cargo_owner: F.taxpayer16.npwp })}`)
  t.same(wrongOwner.body, [])
  const missing = await get(sb, `${DEV}/document_sp2_container/cargo_owner/${qs({ bl_date: blDateCompact, npwp_cargo_owner: npwp, bl_no: blNo })}`)
  t.equal(missing.status, 400)
})

t.test('finalization takes {"id_document_sp2"} with Authorization only', async (t) => {
  const sb = await sandbox(t)
  for (const prefix of [DEV, V3]) {
    const res = await post(sb, `${prefix}/document_sp2/final/`, { id_document_sp2: F.sp2.sp2Id }, TOKEN)
    t.equal(res.status, 200, prefix)
    t.same(res.body, { message: 'SP2 document finalized', id_document_sp2: F.sp2.sp2Id, is_finished: 1, status: 'Finish' })
  }
  const again = await post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: F.sp2.sp2Id }, { ...TOKEN, 'customs-api-key': 'wrong' })
  t.equal(again.status, 200, 'repeatable; an API key is not looked at')

  const unknown = await post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: F.unknownSp2Id }, TOKEN)
  t.equal(unknown.status, 404)
  t.match(unknown.body, { message: String })
  for (const body of [{}, { id: F.sp2.sp2Id }, { id_document_sp2: '' }, { id_document_sp2: 'not-a-uuid' }, { id_document_sp2: 12 }]) {
    const res = await post(sb, `${DEV}/document_sp2/final`, body, TOKEN)
    t.equal(res.status, 400, JSON.stringify(body))
    t.match(res.body, { message: String })
  }
})

t.test('benchmark taxpayers answer 20 and 500 documents of about 2 KB', async (t) => {
  const sb = await sandbox(t)
  for (const bench of [F.benchmark.twenty, F.benchmark.fiveHundred]) {
    const res = await get(sb, hostToHost(DEV, bench.npwp, bench.blNo, bench.blDateCompact))
    t.equal(res.status, 200)
    const docs = res.body as Doc[]
    t.equal(docs.length, bench.documents)
    const average = res.text.length / docs.length
    t.ok(average > 1500 && average < 3500, `average ${Math.round(average)} bytes`)
    t.equal(new Set(docs.map((d) => d.id_document_sp2)).size, docs.length, 'distinct ids')
    t.same(docs.flatMap(problems), [], 'every document follows 2.1')
    const again = await get(sb, hostToHost(DEV, bench.npwp, bench.blNo, bench.blDateCompact))
    t.equal(again.text, res.text, 'stable between calls')
  }
  const last = await get(sb, hostToHost(DEV, F.benchmark.fiveHundred.npwp, F.benchmark.fiveHundred.blNo, F.benchmark.fiveHundred.blDateCompact))
  const doc = (last.body as Doc[])[499]
  const final = await post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: doc?.id_document_sp2 }, TOKEN)
  t.equal(final.status, 200, 'benchmark documents can be finalized too')
})

t.test('SP2 operations need both headers except finalization', async (t) => {
  const sb = await sandbox(t)
  const { npwp, blNo, blDateCompact } = F.sp2
  t.equal((await get(sb, hostToHost(DEV, npwp, blNo, blDateCompact), KEY)).status, 401)
  t.equal((await get(sb, hostToHost(DEV, npwp, blNo, blDateCompact), TOKEN)).status, 401)
  t.equal((await get(sb, hostToHost(DEV, npwp, blNo, blDateCompact), AUTH)).status, 200)
})
