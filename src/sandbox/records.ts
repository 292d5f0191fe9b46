// Wire shapes of the hub's records (docs/reference/glossary.md#resources), with the field
// names and field order the hub uses. Types only.

/** 2.9 BL list entry; bl_date is `YYYY-MM-DD HH:MM:SS.S`. */
export interface BlListEntry {
  bl_no: string
  bl_date: string
}

/**
 * Element of a container list. The description never shows one (its examples
 * are empty arrays); this shape is the sandbox's documented choice.
 */
export interface ContainerListItem {
  no_kontainer: string
  ukuran_kontainer: string
  jenis_kontainer: string
  no_bl: string
  /** `YYYY-MM-DD` */
  tgl_bl: string
}

/** 2.8 BC 2.0 declaration record: every field is a string. */
export interface Declaration {
  tgl_bl: string
  nm_ff: string
  npwp_cargoowner: string
  tgl_sppb: string
  car: string
  no_pib: string
  no_sppb: string
  tgl_pib: string
  npwp_ff: string
  host_bl: string
  nm_cargoowner: string
  status: string
}

/** 2.6 SP2 container. */
export interface Sp2Container {
  id_sp2_container: number
  container_no: string
  container_size: string
  container_type: string
  /** null, '' and a pass number all occur. */
  gate_pass: string | null
}

/** 4.1 answer element: 2.6 plus the owning document's id. */
export interface CargoOwnerContainer extends Sp2Container {
  id_document_sp2: string
}

/** 2.7 */
export interface Sp2Log {
  id_sp2_log: number
  id_document_sp2: string
  create_date: string
  status: string
}

/** 2.4 */
export interface UserDocument {
  id_user_document: number
  npwp: string
  access_do: number
  access_sp2: number
  access_trucking: number
  access_warehouse: number
  access_depo: number
  access_domestic: number
  is_ppjk: number
  name: string
}

/** 2.3 */
export interface DocumentType {
  kd_document_type: number
  kd_process_type: number
  document_name: string
  description: string
  containerAPI: string
  mst_process_type: { kd_process_type: number, process_name: string }
}

/** 2.2 */
export interface TdDocument {
  id_document: number
  kd_document_type: number
  document_no: string
  document_date: string
  document_status: string
  bl_date: string
  finish_do: number
  finish_trucking: number
  finish_sp2: number
  finish_warehouse: number
  finish_depo: number
  nm_cargoowner: string
  no_sppb: string
  tanggal_sppb: string
  mst_document_type: DocumentType
  user_document: UserDocument[]
  npwp_cargo_owner: string
  bl_no: string
  do_number: string | null
  do_date: string | null
}

/** Element of mstPlatformServices; the description does not show it, this is our choice. */
export interface PlatformService {
  id_service: number
  service_name: string
}

/** 2.5 */
export interface Platform {
  id_platform: string
  nama_platform: string
  company: string
  tc_url: string
  payment_url: string
  live_tracking_url: string
  no_rekening: string | null
  npwp: string | null
  app_url: string | null
  logo_platform: string
  publication_date: string
  publication_date_updated: string
  kode_kantor: string | null
  mst_kantor: string | null
  mstPlatformServices: PlatformService[]
}

/** 2.1 */
export interface Sp2Document {
  id_document_sp2: string
  request_date: string
  id_platform: string
  id_ff_ppjk: string | null
  terminal: string
  paid_thrud_date: string
  proforma: string
  proforma_date: string
  price: number
  status: string
  party: number
  url: string | null
  is_finished: number
  payment_url: string | null
  td_document: TdDocument
  mst_platform: Platform
  container: Sp2Container[]
  sp2_log: Sp2Log[]
  id_document: number
}
