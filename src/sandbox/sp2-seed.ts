import { addDays, pad } from './dates.ts'
import { PLATFORMS } from './platforms.ts'
import { createRng, uuidFrom } from './prng.ts'
import type { DocumentType, Sp2Container, Sp2Document, Sp2Log, UserDocument } from './records.ts'

/** A physical container as the seed knows it; lookups render it in their own shapes. */
export interface ContainerUnit {
  containerNo: string
  /** Nominal length in feet, as the hub writes it ('20', '40', '45'). */
  size: string
  /** ISO 6346 size-type code, used by the SP2 records. */
  isoType: string
  /** Plain-word type, used by the 4.7 container lists. */
  kind: string
}

export type SppbKind = 'bc20' | 'bc23'

/** Running integer ids; shared by all documents of one generation pass. */
export interface IdCounters {
  document: number
  container: number
  log: number
  userDocument: number
}

export interface Sp2Input {
  /** Seed string of this document; the same input always gives the same document. */
  seed: string
  ids: IdCounters
  npwp: string
  name: string
  blNo: string
  blDate: string
  kind: SppbKind
  sppbNo: string
  sppbDate: string
  units: readonly ContainerUnit[]
  segment: string
}

const TERMINALS = ['NPCT1', 'JICT', 'KOJA', 'TERMINAL 3 PRIOK', 'MAL']
const PPJK = [
  { npwp: '031234567890000', name: 'PT SINAR PPJK MANDIRI' },
  { npwp: '0412345678901234', name: 'PT DUTA KEPABEANAN NUSANTARA' }
]
// Statuses beyond Finish are not shown (docs/hub.md#open-points); these are plausible
// earlier steps of the SP2 life cycle.
const LIFE_CYCLE = ['Submit', 'Paid', 'Finish']

function documentType (kind: SppbKind, segment: string): DocumentType {
  const process = { kd_process_type: 1, process_name: 'Impor' }
  return kind === 'bc20'
    ? {
        kd_document_type: 1,
        kd_process_type: 1,
        document_name: 'SPPB BC 2.0',
        description: 'SPPB impor untuk dipakai',
        containerAPI: `/V1/${segment}/INT/AUTH/kontainerbc20/`,
        mst_process_type: process
      }
    : {
        kd_document_type: 2,
        kd_process_type: 1,
        document_name: 'SPPB BC 2.3',
        description: 'SPPB ke tempat penimbunan berikat',
        containerAPI: `/V1/${segment}/INT/AUTH/kontainerbc23/`,
        mst_process_type: process
      }
}

function time (hour: number, minute: number, second: number): string {
  return `${pad(hour)}:${pad(minute)}:${pad(second)}`
}

/** Builds one SP2 document (2.1) with every nested record. */
export function makeSp2Document (input: Sp2Input): Sp2Document {
  const rng = createRng(input.seed)
  const { ids } = input
  const id = uuidFrom(rng)
  const idDocument = ids.document++
  const platform = rng.pick(PLATFORMS)
  const ppjk = rng.chance(0.5) ? rng.pick(PPJK) : undefined
  const status = rng.chance(0.7) ? 'Finish' : rng.pick(['Submit', 'Paid'])
  const finished = status === 'Finish' ? 1 : 0
  const terminal = rng.pick(TERMINALS)

  const requestDay = addDays(input.sppbDate, rng.int(0, 2))
  const startHour = rng.int(7, 15)
  const requestDate = `${requestDay} ${time(startHour, rng.int(0, 59), rng.int(0, 59))}`
  // The first log entry is the request itself; later steps follow hours apart.
  const logs: Sp2Log[] = LIFE_CYCLE.slice(0, LIFE_CYCLE.indexOf(status) + 1).map((step, i) => ({
    id_sp2_log: ids.log++,
    id_document_sp2: id,
    create_date: i === 0 ? requestDate : `${requestDay} ${time(startHour + i * 2, rng.int(0, 59), rng.int(0, 59))}`,
    status: step
  }))

  // gate_pass: a pass number once finished, but '' and null both occur too.
  const containers: Sp2Container[] = input.units.map((unit, i) => ({
    id_sp2_container: ids.container++,
    container_no: unit.containerNo,
    container_size: unit.size,
    container_type: unit.isoType,
    gate_pass: finished === 1 ? (i % 3 === 2 ? '' : `GP${rng.digits(10)}`) : (i % 2 === 1 ? '' : null)
  }))

  const userDocuments: UserDocument[] = [{
    id_user_document: ids.userDocument++,
    npwp: input.npwp,
    access_do: 1,
    access_sp2: 1,
    access_trucking: 1,
    access_warehouse: rng.int(0, 1),
    access_depo: rng.int(0, 1),
    access_domestic: 0,
    is_ppjk: 0,
    name: input.name
  }]
  if (ppjk !== undefined) {
    userDocuments.push({
      id_user_document: ids.userDocument++,
      npwp: ppjk.npwp,
      access_do: 1,
      access_sp2: 1,
      access_trucking: 0,
      access_warehouse: 0,
      access_depo: 0,
      access_domestic: 0,
      is_ppjk: 1,
      name: ppjk.name
    })
  }

  const hasDo = rng.chance(0.6)
  // Cents never end in 0, so the price always prints with two decimals.
  const price = Number(`${rng.int(350, 4800)}${rng.digits(3)}.${rng.int(1, 9)}${rng.int(1, 9)}`)

  return {
    id_document_sp2: id,
    request_date: requestDate,
    id_platform: platform.id_platform,
    id_ff_ppjk: ppjk?.npwp ?? null,
    terminal,
    paid_thrud_date: addDays(requestDay, rng.int(3, 7)),
    proforma: `PROFORMA SP2 ${terminal} ${rng.digits(7)}/${requestDay.slice(0, 4)}`,
    proforma_date: requestDay,
    price,
    status,
    party: containers.length,
    url: finished === 1 ? `https://sp2.hub.example/cetak/${id}.pdf` : null,
    is_finished: finished,
    payment_url: status === 'Submit'
      ? platform.payment_url.replace('{kode}', rng.hex(16)).replace('{idRequestBooking}', `SP2-${idDocument}`)
      : null,
    td_document: {
      id_document: idDocument,
      kd_document_type: input.kind === 'bc20' ? 1 : 2,
      document_no: input.sppbNo,
      document_date: input.sppbDate,
      document_status: 'SPPB',
      bl_date: input.blDate,
      finish_do: hasDo ? 1 : 0,
      finish_trucking: rng.int(0, 1),
      finish_sp2: finished,
      finish_warehouse: 0,
      finish_depo: rng.int(0, 1),
      nm_cargoowner: input.name,
      no_sppb: input.sppbNo,
      tanggal_sppb: input.sppbDate,
      mst_document_type: documentType(input.kind, input.segment),
      user_document: userDocuments,
      npwp_cargo_owner: input.npwp,
      bl_no: input.blNo,
      do_number: hasDo ? `DO/${input.blNo.slice(0, 4)}/${rng.digits(6)}` : null,
      do_date: hasDo ? addDays(input.blDate, rng.int(1, 3)) : null
    },
    mst_platform: structuredClone(platform),
    container: containers,
    sp2_log: logs,
    id_document: idDocument
  }
}
