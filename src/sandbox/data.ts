import { DEFAULT_PATH_SEGMENT, SANDBOX_PLATFORM_ID } from './constants.ts'
import { CONTAINER_OPERATIONS } from './container-operations.ts'
import type { ContainerOperationName } from './container-operations.ts'
import { addDays, compactDate, pad, stampedBlDate, timeOfDay } from './dates.ts'
import { makeContainerNo } from './iso6346.ts'
import { createRng } from './prng.ts'
import type { Rng } from './prng.ts'
import type { ContainerListItem, Declaration, Sp2Document } from './records.ts'
import { makeSp2Document } from './sp2-seed.ts'
import type { ContainerUnit, IdCounters, SppbKind } from './sp2-seed.ts'

// The sandbox's seeded world. Everything is derived from fixed seed strings,
// so two sandboxes (or two runs) serve byte-identical data.

export interface BlEntry {
  blNo: string
  /** `YYYY-MM-DD` */
  blDate: string
}

export interface Taxpayer {
  npwp: string
  name: string
  bc16: BlEntry[]
  bc20: BlEntry[]
  bc23: BlEntry[]
}

export interface Dataset {
  taxpayers: Taxpayer[]
  /** Every 4.7 list entry, per operation. */
  containerLists: Record<ContainerOperationName, ContainerListItem[]>
  declarations: Declaration[]
  /** SP2 documents of the ordinary taxpayers (benchmark ones are generated on demand). */
  sp2Documents: Sp2Document[]
  bookingRequestIds: readonly string[]
  /** SP2 documents of one BL, benchmark taxpayers included. */
  sp2ForBl (npwp: string, blNo: string, blDate: string): Sp2Document[]
  findSp2 (id: string): Sp2Document | undefined
}

interface TaxpayerSeed {
  npwp: string
  name: string
  bc16: number
  bc20: number
  bc23: number
}

// Fifteen- and sixteen-digit NPWPs both occur since the 2024 NIK-based format.
const TAXPAYER_SEEDS: readonly TaxpayerSeed[] = [
  { npwp: '012345678901000', name: 'PT SANDBOX NUSANTARA IMPOR', bc16: 2, bc20: 3, bc23: 2 },
  { npwp: '0123456789012345', name: 'PT SAMUDRA LOGISTIK INDONESIA', bc16: 2, bc20: 2, bc23: 2 },
  { npwp: '023456789012000', name: 'CV MAJU BERSAMA ABADI', bc16: 0, bc20: 2, bc23: 1 },
  { npwp: '0345678901234567', name: 'PT KARGO TIMUR RAYA', bc16: 1, bc20: 2, bc23: 1 }
]

// Load-test taxpayers; each gets its own integer id range so that lazily
// generated documents never depend on request order.
const BENCHMARK_SEEDS = [
  { npwp: '099000000000020', name: 'PT UJI BEBAN DUA PULUH', documents: 20, idBase: 1_000_000 },
  { npwp: '099000000000500', name: 'PT UJI BEBAN LIMA RATUS', documents: 500, idBase: 2_000_000 }
] as const

const BOOKING_REQUEST_IDS = [
  'BKG-20240301-0001',
  'BKG-20240301-0002',
  'BKG-20240305-0017',
  'BKG-20240312-0042',
  'BKG-20240320-0105'
] as const

const CARRIERS = ['MEDU', 'MAEU', 'ONEY', 'COSU', 'HLCU', 'EGLV', 'OOLU', 'CMDU']
const PORTS = ['JKT', 'SUB', 'SRG', 'BLW', 'MKS']
const OWNER_CODES = ['MSCU', 'MAEU', 'TGHU', 'CMAU', 'HLXU', 'OOLU', 'TCLU', 'SEGU', 'TRHU', 'BMOU']
const UNIT_TYPES = [
  { size: '20', isoType: '22G1', kind: 'DRY' },
  { size: '40', isoType: '42G1', kind: 'DRY' },
  { size: '40', isoType: '45G1', kind: 'HIGH CUBE' },
  { size: '20', isoType: '22R1', kind: 'REEFER' },
  { size: '40', isoType: '45R1', kind: 'REEFER' },
  { size: '20', isoType: '22U1', kind: 'OPEN TOP' }
]
const FORWARDERS = [
  { npwp: '031234567890000', name: 'PT SINAR PPJK MANDIRI' },
  { npwp: '0412345678901234', name: 'PT DUTA KEPABEANAN NUSANTARA' },
  { npwp: '027777888899000', name: 'PT CAHAYA FORWARDING INDONESIA' }
]

/** Tracks values that must be unique across one dataset. */
class Registry {
  readonly used = new Set<string>()
  claim (make: () => string): string {
    for (;;) {
      const value = make()
      if (!this.used.has(value)) {
        this.used.add(value)
        return value
      }
    }
  }
}

function makeBl (rng: Rng, registry: Registry): BlEntry {
  const blNo = registry.claim(() => `${rng.pick(CARRIERS)}${rng.pick(PORTS)}${rng.digits(7)}`)
  return { blNo, blDate: `2024-${pad(rng.int(1, 6))}-${pad(rng.int(1, 28))}` }
}

function makeUnits (rng: Rng, registry: Registry, count: number): ContainerUnit[] {
  return Array.from({ length: count }, () => ({
    containerNo: registry.claim(() => makeContainerNo(rng.pick(OWNER_CODES), rng)),
    ...rng.pick(UNIT_TYPES)
  }))
}

function listItem (unit: ContainerUnit, bl: BlEntry): ContainerListItem {
  return {
    no_kontainer: unit.containerNo,
    ukuran_kontainer: unit.size,
    jenis_kontainer: unit.kind,
    no_bl: bl.blNo,
    tgl_bl: bl.blDate
  }
}

/** A declaration date, `YYYY-MM-DD HH:MM:SS.S`, its time of day from `seed`. */
function declarationDate (isoDate: string, seed: string): string {
  return `${isoDate} ${timeOfDay(seed)}`
}

function makeDeclaration (rng: Rng, registry: Registry, taxpayer: Taxpayer, bl: BlEntry): Declaration {
  const forwarder = rng.pick(FORWARDERS)
  const pibDate = addDays(bl.blDate, rng.int(1, 3))
  return {
    tgl_bl: stampedBlDate(bl.blNo, bl.blDate),
    nm_ff: forwarder.name,
    npwp_cargoowner: taxpayer.npwp,
    tgl_sppb: declarationDate(addDays(pibDate, rng.int(0, 2)), `sppb:${bl.blNo}:${pibDate}`),
    car: `040300${rng.digits(6)}${compactDate(pibDate)}${rng.digits(6)}`,
    no_pib: registry.claim(() => rng.digits(6)),
    no_sppb: `${rng.digits(6)}/KPU.01/${pibDate.slice(0, 4)}`,
    tgl_pib: declarationDate(pibDate, `pib:${bl.blNo}:${pibDate}`),
    npwp_ff: forwarder.npwp,
    host_bl: bl.blNo,
    nm_cargoowner: taxpayer.name,
    status: 'SPPB'
  }
}

/** Splits units over one or two SP2 documents. */
function splitUnits (units: ContainerUnit[], twoDocuments: boolean): ContainerUnit[][] {
  if (!twoDocuments || units.length < 2) return [units]
  const half = Math.ceil(units.length / 2)
  return [units.slice(0, half), units.slice(half)]
}

export function createDataset (segment: string = DEFAULT_PATH_SEGMENT): Dataset {
  const registry = new Registry()
  const ids: IdCounters = { document: 100001, container: 300001, log: 700001, userDocument: 50001 }
  const unitsByBl = new Map<string, ContainerUnit[]>()
  const containerLists = Object.fromEntries(
    CONTAINER_OPERATIONS.map((op) => [op.name, [] as ContainerListItem[]])
  ) as Record<ContainerOperationName, ContainerListItem[]>
  const declarations: Declaration[] = []
  const sp2Documents: Sp2Document[] = []

  const ordinary: Taxpayer[] = TAXPAYER_SEEDS.map((seed) => {
    const rng = createRng(`taxpayer:${seed.npwp}`)
    const bls = (count: number): BlEntry[] => Array.from({ length: count }, () => makeBl(rng, registry))
    return { npwp: seed.npwp, name: seed.name, bc16: bls(seed.bc16), bc20: bls(seed.bc20), bc23: bls(seed.bc23) }
  })

  // Benchmark taxpayers have one BC 2.0 BL each and nothing else but SP2
  // documents, which are generated on first use.
  const benchmarks = BENCHMARK_SEEDS.map((seed) => ({
    ...seed,
    bl: makeBl(createRng(`benchmark:${seed.npwp}`), registry),
    generated: undefined as Sp2Document[] | undefined
  }))
  const taxpayers: Taxpayer[] = [
    ...ordinary,
    ...benchmarks.map((b) => ({ npwp: b.npwp, name: b.name, bc16: [], bc20: [b.bl], bc23: [] }))
  ]

  for (const [index, taxpayer] of ordinary.entries()) {
    const primary = index === 0
    for (const kind of ['bc20', 'bc23'] as const satisfies readonly SppbKind[]) {
      for (const [blIndex, bl] of taxpayer[kind].entries()) {
        const rng = createRng(`bl:${bl.blNo}`)
        // The first BC 2.0 BL of the first taxpayer is the showcase: four
        // containers over two SP2 documents and two declarations.
        const showcase = primary && kind === 'bc20' && blIndex === 0
        const units = makeUnits(rng, registry, showcase ? 4 : rng.int(1, 4))
        unitsByBl.set(bl.blNo, units)
        let sppb = { no: `${rng.digits(6)}/KPU.01/2024`, date: addDays(bl.blDate, rng.int(2, 4)) }
        if (kind === 'bc20') {
          const count = showcase ? 2 : 1
          for (let i = 0; i < count; i++) declarations.push(makeDeclaration(rng, registry, taxpayer, bl))
          const first = declarations[declarations.length - count]
          if (first !== undefined) sppb = { no: first.no_sppb, date: first.tgl_sppb.slice(0, 10) }
        }
        const parts = splitUnits(units, showcase || rng.chance(0.4))
        for (const [part, partUnits] of parts.entries()) {
          sp2Documents.push(makeSp2Document({
            seed: `sp2:${bl.blNo}:${part}`,
            ids,
            npwp: taxpayer.npwp,
            name: taxpayer.name,
            blNo: bl.blNo,
            blDate: bl.blDate,
            kind,
            sppbNo: sppb.no,
            sppbDate: sppb.date,
            units: partUnits,
            segment
          }))
        }
      }
    }
  }

  for (const op of CONTAINER_OPERATIONS) {
    const items = containerLists[op.name]
    for (const [index, taxpayer] of ordinary.entries()) {
      let bls: BlEntry[]
      if (op.name === 'kontainerbc20') bls = taxpayer.bc20
      else if (op.name === 'kontainerbc23') bls = taxpayer.bc23
      else {
        const rng = createRng(`${op.name}:${taxpayer.npwp}`)
        bls = Array.from({ length: index === 0 ? 2 : 1 }, () => {
          const bl = makeBl(rng, registry)
          unitsByBl.set(bl.blNo, makeUnits(rng, registry, rng.int(1, 4)))
          return bl
        })
      }
      for (const bl of bls) {
        for (const unit of unitsByBl.get(bl.blNo) ?? []) items.push(listItem(unit, bl))
      }
    }
  }

  const findBenchmark = (npwp: string, blNo: string, blDate: string): Sp2Document[] | undefined => {
    const bench = benchmarks.find((b) => b.npwp === npwp && b.bl.blNo === blNo && b.bl.blDate === blDate)
    if (bench === undefined) return undefined
    if (bench.generated === undefined) {
      const base = bench.idBase
      const benchIds: IdCounters = { document: base + 1, container: base + 100_001, log: base + 300_001, userDocument: base + 600_001 }
      const unitRegistry = new Registry()
      bench.generated = Array.from({ length: bench.documents }, (_, i) => {
        const rng = createRng(`benchmark:${npwp}:${i}`)
        return makeSp2Document({
          seed: `benchmark-sp2:${npwp}:${i}`,
          ids: benchIds,
          npwp,
          name: bench.name,
          blNo,
          blDate,
          kind: 'bc20',
          sppbNo: `${pad(i + 1, 6)}/KPU.01/2024`,
          sppbDate: addDays(blDate, 3),
          units: makeUnits(rng, unitRegistry, rng.int(1, 3)),
          segment
        })
      })
    }
    return bench.generated
  }

  const byId = new Map(sp2Documents.map((doc) => [doc.id_document_sp2, doc]))

  return {
    taxpayers,
    containerLists,
    declarations,
    sp2Documents,
    bookingRequestIds: BOOKING_REQUEST_IDS,
    sp2ForBl (npwp, blNo, blDate) {
      return findBenchmark(npwp, blNo, blDate) ??
        sp2Documents.filter((doc) => doc.td_document.npwp_cargo_owner === npwp &&
          doc.td_document.bl_no === blNo && doc.td_document.bl_date === blDate)
    },
    findSp2 (id) {
      const found = byId.get(id)
      if (found !== undefined) return found
      for (const bench of benchmarks) {
        const doc = findBenchmark(bench.npwp, bench.bl.blNo, bench.bl.blDate)?.find((d) => d.id_document_sp2 === id)
        if (doc !== undefined) return doc
      }
      return undefined
    }
  }
}

/** A BL as tests name it: the date both as the hub's date and as a request parameter. */
export interface BlFixture {
  blNo: string
  /** `YYYY-MM-DD` */
  blDate: string
  /** `YYYYMMDD`, the form of the bl_date / tglBl request parameters. */
  blDateCompact: string
  /** `YYYY-MM-DD HH:MM:SS.S`, as the BL lists (and declarations) stamp the date. */
  blDateStamped: string
}

export interface TaxpayerFixture {
  npwp: string
  name: string
  bc16: BlFixture[]
  bc20: BlFixture[]
  bc23: BlFixture[]
}

export interface ContainerListFixture {
  /** The parameters to send; the operation uses those its 4.7 row lists. */
  noBl: string
  tglBl: string
  /** What the operation answers for them (date-only lookups may span several BLs). */
  containerNos: string[]
}

export interface SandboxFixtures {
  /** 15-digit NPWP with BLs of all three types. */
  taxpayer: TaxpayerFixture
  /** 16-digit NPWP with BLs of all three types. */
  taxpayer16: TaxpayerFixture
  /** A taxpayer whose BC 1.6 list is empty. */
  taxpayerWithoutBc16: TaxpayerFixture
  /** Every ordinary (non-benchmark) taxpayer's NPWP. */
  npwps: string[]
  /** Well-formed NPWP the hub knows nothing about (empty lists, 404 for PIB lookups). */
  unknownNpwp: string
  /** Well-formed BL number the hub knows nothing about (empty lists). */
  unknownBlNo: string
  /** One BC 2.0 declaration (BC20ByNoPib, docs/hub.md#operations). */
  declaration: { npwp: string, pibNo: string, blNo: string, blDate: string }
  /** Six-digit PIB number that does not exist. */
  unknownPibNo: string
  /** A BL with two declarations: BC20ByNoBL answers two records. */
  blWithTwoDeclarations: { blNo: string, pibNos: string[] }
  /** Per 4.7 operation, parameters that return containers. */
  containers: Record<ContainerOperationName, ContainerListFixture>
  /** The showcase SP2 BL: two documents, four containers. */
  sp2: BlFixture & {
    npwp: string
    documentIds: string[]
    /** First document's id (the finalization's, docs/hub.md#operations). */
    sp2Id: string
    /** First document's td_document.id_document. */
    idDocument: number
    /** A container of the first document (4.1 lookup). */
    containerNo: string
  }
  /** A UUID that is no SP2 document. */
  unknownSp2Id: string
  /** Load-test taxpayers: host-to-host answers 20 and 500 documents of about 2 KB. */
  benchmark: {
    twenty: BlFixture & { npwp: string, documents: number }
    fiveHundred: BlFixture & { npwp: string, documents: number }
  }
  /** Booking request codes the booking calls (4.8, 4.9) accept. */
  bookingRequestId: string
  bookingRequestIds: string[]
  unknownBookingRequestId: string
  /** idPlatform accepted by default in offers. */
  platformId: string
}

function blFixture (bl: BlEntry): BlFixture {
  return { blNo: bl.blNo, blDate: bl.blDate, blDateCompact: compactDate(bl.blDate), blDateStamped: stampedBlDate(bl.blNo, bl.blDate) }
}

function taxpayerFixture (taxpayer: Taxpayer | undefined): TaxpayerFixture {
  if (taxpayer === undefined) throw new Error('seed is missing a taxpayer')
  return {
    npwp: taxpayer.npwp,
    name: taxpayer.name,
    bc16: taxpayer.bc16.map(blFixture),
    bc20: taxpayer.bc20.map(blFixture),
    bc23: taxpayer.bc23.map(blFixture)
  }
}

function first<T> (items: readonly T[], what: string): T {
  const item = items[0]
  if (item === undefined) throw new Error(`seed has no ${what}`)
  return item
}

function buildFixtures (): SandboxFixtures {
  const data = createDataset()
  const [main, sixteen, withoutBc16] = data.taxpayers
  const mainFixture = taxpayerFixture(main)
  const showcaseBl = first(mainFixture.bc20, 'BC 2.0 BL')
  const sp2Docs = data.sp2ForBl(mainFixture.npwp, showcaseBl.blNo, showcaseBl.blDate)
  const sp2First = first(sp2Docs, 'SP2 document')
  const declaration = first(data.declarations, 'declaration')
  const twoDeclarations = data.declarations.filter((d) => d.host_bl === declaration.host_bl)

  const containers = Object.fromEntries(CONTAINER_OPERATIONS.map((op) => {
    const item = first(data.containerLists[op.name], `${op.name} container`)
    const tglBl = compactDate(item.tgl_bl)
    const matches = data.containerLists[op.name].filter((c) =>
      (!(op.params as readonly string[]).includes('noBl') || c.no_bl === item.no_bl) &&
      (!(op.params as readonly string[]).includes('tglBl') || compactDate(c.tgl_bl) === tglBl))
    return [op.name, { noBl: item.no_bl, tglBl, containerNos: matches.map((c) => c.no_kontainer) }]
  })) as Record<ContainerOperationName, ContainerListFixture>

  const benchmark = (npwp: string, documents: number): BlFixture & { npwp: string, documents: number } => {
    const taxpayer = data.taxpayers.find((t) => t.npwp === npwp)
    return { npwp, documents, ...blFixture(first(taxpayer?.bc20 ?? [], 'benchmark BL')) }
  }

  return {
    taxpayer: mainFixture,
    taxpayer16: taxpayerFixture(sixteen),
    taxpayerWithoutBc16: taxpayerFixture(withoutBc16),
    npwps: TAXPAYER_SEEDS.map((t) => t.npwp),
    unknownNpwp: '098765432109000',
    unknownBlNo: 'ZIMUJKT9990001',
    declaration: {
      npwp: declaration.npwp_cargoowner,
      pibNo: declaration.no_pib,
      blNo: declaration.host_bl,
      blDate: declaration.tgl_bl.slice(0, 10)
    },
    unknownPibNo: '000000',
    blWithTwoDeclarations: { blNo: declaration.host_bl, pibNos: twoDeclarations.map((d) => d.no_pib) },
    containers,
    sp2: {
      npwp: sp2First.td_document.npwp_cargo_owner,
      ...showcaseBl,
      documentIds: sp2Docs.map((d) => d.id_document_sp2),
      sp2Id: sp2First.id_document_sp2,
      idDocument: sp2First.id_document,
      containerNo: first(sp2First.container, 'SP2 container').container_no
    },
    unknownSp2Id: '6f1c2d3e-4b5a-4c7d-9e8f-0a1b2c3d4e5f',
    benchmark: {
      twenty: benchmark('099000000000020', 20),
      fiveHundred: benchmark('099000000000500', 500)
    },
    bookingRequestId: BOOKING_REQUEST_IDS[0],
    bookingRequestIds: [...BOOKING_REQUEST_IDS],
    unknownBookingRequestId: 'BKG-20991231-9999',
    platformId: SANDBOX_PLATFORM_ID
  }
}

/**
 * Real values from the seeded data, for tests and docs (docs/reference/sandbox.md
 * lists them). Dates are given as `YYYY-MM-DD` (blDate) and `YYYYMMDD` (blDateCompact, tglBl).
 */
export const SANDBOX_FIXTURES: SandboxFixtures = buildFixtures()
