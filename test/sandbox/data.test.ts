import t from 'tap'
import { operationsOf } from '../../src/catalogue/operations.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { createDataset } from '../../src/sandbox/data.ts'
import { isValidContainerNo } from '../../src/sandbox/iso6346.ts'
import { iso6346Valid } from './helpers.ts'

t.test('the test-side ISO 6346 checker agrees with known numbers', async (t) => {
  // CSQU3054383 is the standard's worked example.
  t.ok(iso6346Valid('CSQU3054383'))
  t.notOk(iso6346Valid('CSQU3054384'))
  t.notOk(iso6346Valid('CSQU305438'))
  t.ok(iso6346Valid('MSCU1234566') !== iso6346Valid('MSCU1234565'))
  t.ok(isValidContainerNo('CSQU3054383'))
  t.notOk(isValidContainerNo('CSQU3054381'))
})

t.test('every seeded container number has a valid ISO 6346 check digit', async (t) => {
  const data = createDataset()
  const numbers = new Set<string>()
  for (const items of Object.values(data.containerLists)) for (const item of items) numbers.add(item.no_kontainer)
  for (const doc of data.sp2Documents) for (const c of doc.container) numbers.add(c.container_no)
  for (const bench of [F.benchmark.twenty, F.benchmark.fiveHundred]) {
    for (const doc of data.sp2ForBl(bench.npwp, bench.blNo, bench.blDate)) for (const c of doc.container) numbers.add(c.container_no)
  }
  t.ok(numbers.size > 1000, `${numbers.size} container numbers`)
  const invalid = [...numbers].filter((n) => !iso6346Valid(n))
  t.same(invalid, [])
})

t.test('the seed is deterministic and needs no Math.random', async (t) => {
  const random = Math.random
  Math.random = () => { throw new Error('Math.random used') }
  try {
    const a = createDataset()
    const b = createDataset()
    t.equal(JSON.stringify(a.sp2Documents), JSON.stringify(b.sp2Documents))
    t.equal(JSON.stringify(a.containerLists), JSON.stringify(b.containerLists))
    t.equal(JSON.stringify(a.declarations), JSON.stringify(b.declarations))
    const bench = F.benchmark.twenty
    t.equal(JSON.stringify(a.sp2ForBl(bench.npwp, bench.blNo, bench.blDate)), JSON.stringify(b.sp2ForBl(bench.npwp, bench.blNo, bench.blDate)))
  } finally {
    Math.random = random
  }
})

t.test('lazily generated benchmark documents do not depend on what was asked first', async (t) => {
  const a = createDataset()
  const b = createDataset()
  const { twenty, fiveHundred } = F.benchmark
  const aTwenty = JSON.stringify(a.sp2ForBl(twenty.npwp, twenty.blNo, twenty.blDate))
  a.sp2ForBl(fiveHundred.npwp, fiveHundred.blNo, fiveHundred.blDate)
  b.sp2ForBl(fiveHundred.npwp, fiveHundred.blNo, fiveHundred.blDate)
  t.equal(JSON.stringify(b.sp2ForBl(twenty.npwp, twenty.blNo, twenty.blDate)), aTwenty)
})

t.test('fixtures describe the seed the brief asks for', async (t) => {
  t.match(F.taxpayer.npwp, /^\d{15}$/)
  t.match(F.taxpayer16.npwp, /^\d{16}$/)
  t.ok(F.npwps.length >= 4)
  t.ok(F.npwps.some((n) => n.length === 15) && F.npwps.some((n) => n.length === 16))
  for (const taxpayer of [F.taxpayer, F.taxpayer16]) {
    for (const type of ['bc16', 'bc20', 'bc23'] as const) t.ok(taxpayer[type].length > 0, `${taxpayer.npwp} ${type}`)
  }
  t.same(F.taxpayerWithoutBc16.bc16, [])
  t.match(F.declaration.pibNo, /^\d{6}$/)
  t.same(Object.keys(F.containers).sort(), operationsOf('container-list').map(op => op.id).sort(), 'a container list for each of the catalogue')
  for (const [op, fixture] of Object.entries(F.containers)) {
    t.ok(fixture.containerNos.length > 0, `${op} has containers`)
    t.match(fixture.tglBl, /^\d{8}$/)
  }
  t.equal(F.sp2.documentIds.length, 2)
  t.equal(F.benchmark.twenty.npwp, '099000000000020')
  t.equal(F.benchmark.fiveHundred.npwp, '099000000000500')
  const data = createDataset()
  const allBls = data.taxpayers.flatMap((tp) => [...tp.bc16, ...tp.bc20, ...tp.bc23].map((bl) => bl.blNo))
  t.notOk(allBls.includes(F.unknownBlNo))
  t.notOk(data.taxpayers.some((tp) => tp.npwp === F.unknownNpwp))
  t.notOk(data.bookingRequestIds.includes(F.unknownBookingRequestId))
  t.equal(new Set(allBls).size, allBls.length, 'BL numbers are unique')
})

t.test('fixture values are pinned (the tests and docs/hub.md use them)', async (t) => {
  t.match(F, {
    taxpayer: { npwp: '012345678901000', bc20: [{ blNo: 'COSUMKS9061740', blDate: '2024-02-17', blDateCompact: '20240217' }] },
    taxpayer16: { npwp: '0123456789012345' },
    taxpayerWithoutBc16: { npwp: '023456789012000' },
    declaration: { npwp: '012345678901000', pibNo: '350420', blNo: 'COSUMKS9061740' },
    sp2: { npwp: '012345678901000', blNo: 'COSUMKS9061740', blDateCompact: '20240217' },
    bookingRequestId: 'BKG-20240301-0001',
    platformId: 'PLTSBX01'
  })
})
