import type { FieldSpec, ResourceSpec } from './resource-spec.ts'

/** Where docs/hub.md describes the operations, and what their description leaves open. */
const OPERATIONS_PAGE = 'docs/hub.md#operations'
const OPEN_PAGE = 'docs/hub.md#open-points'

/*
 * Which fields are `required` (always answered; missing, the record is
 * UPSTREAM_BAD_RESPONSE): of a record the hub's description shows in full,
 * its identity (a BL's number and date: every lookup takes both), and the
 * listed fields that are not text: integers, numbers, flags, nested records
 * and lists, and the fields that may be null (a profile's null string there
 * is null, never absent). Text fields other than the identity stay optional:
 * a hub may send one empty, and a profile that reads the empty string as null
 * (public-callers) leaves it out. Records the description does not show
 * (container list items, platform services) and the hub's part of the write
 * answers have no required field.
 */

// An item of the BL lists (docs/hub.md#operations).
export const BlEntry: ResourceSpec = {
  id: 'BillOfLading',
  title: 'Bill of lading list entry',
  source: `an item of the BL lists (${OPERATIONS_PAGE})`,
  required: ['bl_no', 'bl_date'],
  fields: [
    { upstream: 'bl_no', name: 'blNo', kind: 'string', description: 'Bill of lading number' },
    { upstream: 'bl_date', name: 'blDate', dateTimeName: 'blDateTime', kind: 'date-with-time', description: 'Bill of lading date' }
  ]
}

// The answer of BC20ByNoPib (docs/hub.md#operations): every field is a string upstream.
export const Bc20Declaration: ResourceSpec = {
  id: 'Bc20Declaration',
  title: 'BC 2.0 customs declaration (PIB)',
  source: `the answer of BC20ByNoPib, and an item of BC20ByNoBL's (${OPERATIONS_PAGE})`,
  required: ['no_pib'],
  fields: [
    { upstream: 'car', name: 'applicationRef', kind: 'string', description: 'Customs application reference (CAR, nomor aju)' },
    { upstream: 'no_pib', name: 'pibNo', kind: 'string', description: 'PIB (import declaration) number' },
    { upstream: 'tgl_pib', name: 'pibDate', dateTimeName: 'pibDateTime', kind: 'date-with-time', description: 'PIB date' },
    { upstream: 'host_bl', name: 'hostBlNo', kind: 'string', description: 'Host (master) bill of lading number' },
    { upstream: 'tgl_bl', name: 'blDate', dateTimeName: 'blDateTime', kind: 'date-with-time', description: 'Bill of lading date' },
    { upstream: 'no_sppb', name: 'sppbNo', kind: 'string', description: 'SPPB (release approval) number' },
    { upstream: 'tgl_sppb', name: 'sppbDate', dateTimeName: 'sppbDateTime', kind: 'date-with-time', description: 'SPPB date' },
    { upstream: 'status', name: 'status', kind: 'string', description: 'Declaration status, e.g. SPPB' },
    { upstream: 'npwp_cargoowner', name: 'cargoOwnerNpwp', kind: 'string', description: 'Cargo owner taxpayer number' },
    { upstream: 'nm_cargoowner', name: 'cargoOwnerName', kind: 'string', description: 'Cargo owner name' },
    { upstream: 'npwp_ff', name: 'forwarderNpwp', kind: 'string', description: 'Freight forwarder taxpayer number' },
    { upstream: 'nm_ff', name: 'forwarderName', kind: 'string', description: 'Freight forwarder name' }
  ]
}

// The hub's description does not show the items of container lists (docs/hub.md#open-points).
// These are the names seen in practice; anything else is kept, camelCased.
export const CustomsContainer: ResourceSpec = {
  id: 'CustomsContainer',
  title: 'Container of a customs document',
  source: `an item of the container lists, which the description does not show (${OPEN_PAGE})`,
  fields: [
    { upstream: 'no_kontainer', name: 'containerNo', kind: 'string', description: 'Container number (ISO 6346)' },
    { upstream: 'ukuran_kontainer', name: 'containerSize', kind: 'text', description: 'Container size, e.g. 20 or 40' },
    { upstream: 'jenis_kontainer', name: 'containerType', kind: 'string', description: 'Container type in words, e.g. DRY, REEFER, HIGH CUBE (not the ISO size-type code of SP2 containers, `isoSizeTypeCode`)' },
    { upstream: 'no_bl', name: 'blNo', kind: 'string', description: 'Bill of lading number' },
    { upstream: 'tgl_bl', name: 'blDate', kind: 'date', description: 'Bill of lading date' }
  ]
}

const sp2ContainerFields: FieldSpec[] = [
  { upstream: 'id_sp2_container', name: 'sp2ContainerId', kind: 'integer', description: 'SP2 container id' },
  { upstream: 'container_no', name: 'containerNo', kind: 'string', description: 'Container number' },
  { upstream: 'container_size', name: 'containerSize', kind: 'string', description: 'Container size, e.g. 20 or 40' },
  { upstream: 'container_type', name: 'isoSizeTypeCode', kind: 'string', description: 'ISO 6346 size and type code, e.g. 45R1 (not the container type in words of customs lists, `containerType`)' },
  { upstream: 'gate_pass', name: 'gatePass', kind: 'string', nullable: true, emptyAsNull: true, description: 'Gate pass; null when the hub sends null or an empty string' }
]

// `container` of an SP2 document (docs/hub.md#operations).
export const Sp2Container: ResourceSpec = {
  id: 'Sp2Container',
  title: 'Container of an SP2 document',
  source: `\`container\` of an SP2 document (${OPERATIONS_PAGE})`,
  required: ['container_no', 'id_sp2_container', 'gate_pass'],
  fields: sp2ContainerFields
}

// An SP2 container as the cargo-owner lookup answers it (docs/hub.md#operations).
export const CargoOwnerContainer: ResourceSpec = {
  id: 'CargoOwnerContainer',
  title: 'Container of a cargo owner\'s SP2 document',
  source: `an item of document_sp2_container/cargo_owner (${OPERATIONS_PAGE})`,
  required: ['container_no', 'id_sp2_container', 'gate_pass'],
  fields: [
    ...sp2ContainerFields,
    { upstream: 'id_document_sp2', name: 'sp2Id', kind: 'string', format: 'uuid', description: 'SP2 document id' }
  ]
}

// `sp2_log` of an SP2 document (docs/hub.md#operations).
export const Sp2Log: ResourceSpec = {
  id: 'Sp2LogEntry',
  title: 'SP2 status log entry',
  source: `\`sp2_log\` of an SP2 document (${OPERATIONS_PAGE})`,
  required: ['id_sp2_log'],
  fields: [
    { upstream: 'id_sp2_log', name: 'sp2LogId', kind: 'integer', description: 'Log entry id' },
    { upstream: 'id_document_sp2', name: 'sp2Id', kind: 'string', description: 'SP2 document id' },
    { upstream: 'create_date', name: 'createdAt', kind: 'datetime', description: 'When the status was recorded' },
    { upstream: 'status', name: 'status', kind: 'string', description: 'Status, e.g. Finish' }
  ]
}

// `user_document` of a customs document (docs/hub.md#operations).
export const UserDocument: ResourceSpec = {
  id: 'DocumentUser',
  title: 'User with access to a document',
  source: `\`user_document\` of a customs document (${OPERATIONS_PAGE})`,
  required: ['id_user_document', 'access_do', 'access_sp2', 'access_trucking', 'access_warehouse', 'access_depo', 'access_domestic', 'is_ppjk'],
  fields: [
    { upstream: 'id_user_document', name: 'userDocumentId', kind: 'integer', description: 'User-document link id' },
    { upstream: 'npwp', name: 'npwp', kind: 'string', description: 'User taxpayer number' },
    { upstream: 'name', name: 'name', kind: 'string', description: 'User name' },
    { upstream: 'access_do', name: 'deliveryOrderAccess', kind: 'flag', description: 'May use delivery orders' },
    { upstream: 'access_sp2', name: 'sp2Access', kind: 'flag', description: 'May use SP2' },
    { upstream: 'access_trucking', name: 'truckingAccess', kind: 'flag', description: 'May use trucking' },
    { upstream: 'access_warehouse', name: 'warehouseAccess', kind: 'flag', description: 'May use warehousing' },
    { upstream: 'access_depo', name: 'depotAccess', kind: 'flag', description: 'May use depots' },
    { upstream: 'access_domestic', name: 'domesticAccess', kind: 'flag', description: 'May use domestic services' },
    { upstream: 'is_ppjk', name: 'isCustomsBroker', kind: 'flag', description: 'User is a customs broker (PPJK)' }
  ]
}

// `mst_process_type` of a document type (docs/hub.md#operations).
export const ProcessType: ResourceSpec = {
  id: 'ProcessType',
  title: 'Customs process type',
  source: `\`mst_process_type\` of a document type (${OPERATIONS_PAGE})`,
  required: ['kd_process_type'],
  fields: [
    { upstream: 'kd_process_type', name: 'processTypeCode', kind: 'integer', description: 'Process type code' },
    { upstream: 'process_name', name: 'processName', kind: 'string', description: 'Process name' }
  ]
}

// `mst_document_type` of a customs document (docs/hub.md#operations).
export const DocumentType: ResourceSpec = {
  id: 'DocumentType',
  title: 'Customs document type',
  source: `\`mst_document_type\` of a customs document (${OPERATIONS_PAGE})`,
  required: ['kd_document_type', 'kd_process_type', 'mst_process_type'],
  fields: [
    { upstream: 'kd_document_type', name: 'documentTypeCode', kind: 'integer', description: 'Document type code' },
    { upstream: 'kd_process_type', name: 'processTypeCode', kind: 'integer', description: 'Process type code' },
    { upstream: 'document_name', name: 'documentName', kind: 'string', description: 'Document name' },
    { upstream: 'description', name: 'description', kind: 'string', description: 'Description' },
    { upstream: 'containerAPI', name: 'containerLookupUrl', kind: 'string', description: 'Address of the hub\'s container lookup for this document type (a hub address, not a gateway route)' },
    { upstream: 'mst_process_type', name: 'processType', kind: ProcessType, description: 'Process type' }
  ]
}

// `td_document` of an SP2 document (docs/hub.md#operations).
export const TdDocument: ResourceSpec = {
  id: 'CustomsDocument',
  title: 'Customs document of an SP2 document',
  source: `\`td_document\` of an SP2 document (${OPERATIONS_PAGE})`,
  required: ['id_document', 'kd_document_type', 'finish_do', 'finish_trucking', 'finish_sp2', 'finish_warehouse', 'finish_depo', 'do_number', 'do_date', 'mst_document_type', 'user_document'],
  fields: [
    { upstream: 'id_document', name: 'documentId', kind: 'integer', description: 'Document id' },
    { upstream: 'kd_document_type', name: 'documentTypeCode', kind: 'integer', description: 'Document type code' },
    { upstream: 'document_no', name: 'documentNo', kind: 'string', description: 'Document number' },
    { upstream: 'document_date', name: 'documentDate', kind: 'date', description: 'Document date' },
    { upstream: 'document_status', name: 'documentStatus', kind: 'string', description: 'Document status, e.g. SPPB' },
    { upstream: 'bl_no', name: 'blNo', kind: 'string', description: 'Bill of lading number' },
    { upstream: 'bl_date', name: 'blDate', kind: 'date', description: 'Bill of lading date' },
    { upstream: 'finish_do', name: 'deliveryOrderFinished', kind: 'flag', description: 'Delivery order done' },
    { upstream: 'finish_trucking', name: 'truckingFinished', kind: 'flag', description: 'Trucking done' },
    { upstream: 'finish_sp2', name: 'sp2Finished', kind: 'flag', description: 'SP2 done' },
    { upstream: 'finish_warehouse', name: 'warehouseFinished', kind: 'flag', description: 'Warehousing done' },
    { upstream: 'finish_depo', name: 'depotFinished', kind: 'flag', description: 'Depot done' },
    { upstream: 'nm_cargoowner', name: 'cargoOwnerName', kind: 'string', description: 'Cargo owner name' },
    { upstream: 'npwp_cargo_owner', name: 'cargoOwnerNpwp', kind: 'string', description: 'Cargo owner taxpayer number' },
    { upstream: 'no_sppb', name: 'sppbNo', kind: 'string', description: 'SPPB (release approval) number' },
    { upstream: 'tanggal_sppb', name: 'sppbDate', kind: 'date', description: 'SPPB date' },
    { upstream: 'do_number', name: 'deliveryOrderNo', kind: 'text', nullable: true, description: 'Delivery order number' },
    { upstream: 'do_date', name: 'deliveryOrderDate', kind: 'date', nullable: true, description: 'Delivery order date' },
    { upstream: 'mst_document_type', name: 'documentTypeDetails', kind: DocumentType, description: 'The customs document type: code, name, process (not the `documentType` tag of the taxpayer\'s BL list, `bc16`/`bc20`/`bc23`)' },
    { upstream: 'user_document', name: 'users', kind: { arrayOf: UserDocument }, description: 'Users with access to the document' }
  ]
}

// The description does not show the items of mstPlatformServices (docs/hub.md#open-points).
// These are the names seen in practice; anything else is kept, camelCased.
export const PlatformService: ResourceSpec = {
  id: 'PlatformService',
  title: 'Service of a platform',
  source: `an item of a platform's \`mstPlatformServices\`, not shown (${OPEN_PAGE})`,
  fields: [
    { upstream: 'id_service', name: 'serviceId', kind: 'integer', description: 'Service id' },
    { upstream: 'service_name', name: 'serviceName', kind: 'string', description: 'Service name, e.g. Trucking' }
  ]
}

// `mst_platform` of an SP2 document (docs/hub.md#operations).
export const Platform: ResourceSpec = {
  id: 'Platform',
  title: 'Truck or logistics platform',
  source: `\`mst_platform\` of an SP2 document (${OPERATIONS_PAGE})`,
  required: ['no_rekening', 'npwp', 'app_url', 'kode_kantor', 'mst_kantor', 'mstPlatformServices'],
  fields: [
    { upstream: 'id_platform', name: 'platformId', kind: 'string', description: 'Platform code' },
    { upstream: 'nama_platform', name: 'name', kind: 'string', description: 'Platform name' },
    { upstream: 'company', name: 'company', kind: 'string', description: 'Operating company' },
    { upstream: 'tc_url', name: 'termsUrl', kind: 'string', description: 'Terms and conditions address' },
    { upstream: 'payment_url', name: 'paymentUrlTemplate', kind: 'string', description: 'Payment address template, with placeholders for an encoded code and the booking request id' },
    { upstream: 'live_tracking_url', name: 'liveTrackingUrl', kind: 'string', description: 'Live tracking address' },
    { upstream: 'app_url', name: 'appUrl', kind: 'text', nullable: true, description: 'Application address' },
    { upstream: 'no_rekening', name: 'bankAccountNo', kind: 'text', nullable: true, description: 'Bank account number' },
    { upstream: 'npwp', name: 'npwp', kind: 'text', nullable: true, description: 'Platform taxpayer number' },
    { upstream: 'logo_platform', name: 'logoFileName', kind: 'string', description: 'Logo file name' },
    { upstream: 'publication_date', name: 'publishedAt', kind: 'datetime', description: 'First publication' },
    { upstream: 'publication_date_updated', name: 'publicationUpdatedAt', kind: 'datetime', description: 'Last publication update' },
    { upstream: 'kode_kantor', name: 'officeCode', kind: 'text', nullable: true, description: 'Customs office code' },
    { upstream: 'mst_kantor', name: 'office', kind: 'json', nullable: true, description: 'Customs office (its structure is not documented by the hub; passed on with camelCased keys)' },
    { upstream: 'mstPlatformServices', name: 'services', kind: { arrayOf: PlatformService }, description: 'Services the platform offers' }
  ]
}

// An item of document_sp2/host-to-host (docs/hub.md#operations).
export const Sp2Document: ResourceSpec = {
  id: 'Sp2Document',
  title: 'SP2 (delivery order release) document',
  source: `an item of document_sp2/host-to-host (${OPERATIONS_PAGE})`,
  required: ['id_document_sp2', 'id_ff_ppjk', 'price', 'party', 'url', 'is_finished', 'payment_url', 'id_document', 'td_document', 'mst_platform', 'container', 'sp2_log'],
  fields: [
    { upstream: 'id_document_sp2', name: 'sp2Id', kind: 'string', format: 'uuid', description: 'SP2 document id' },
    { upstream: 'request_date', name: 'requestedAt', kind: 'datetime', description: 'When the SP2 was requested' },
    { upstream: 'id_platform', name: 'platformId', kind: 'string', description: 'Platform code' },
    { upstream: 'id_ff_ppjk', name: 'forwarderId', kind: 'text', nullable: true, description: 'Freight forwarder / customs broker id' },
    { upstream: 'terminal', name: 'terminal', kind: 'string', description: 'Terminal name' },
    { upstream: 'paid_thrud_date', name: 'paidThroughDate', kind: 'date', description: 'Paid-through date (upstream `paid_thrud_date`)' },
    { upstream: 'proforma', name: 'proforma', kind: 'string', description: 'Proforma title' },
    { upstream: 'proforma_date', name: 'proformaDate', kind: 'date', description: 'Proforma date' },
    { upstream: 'price', name: 'price', kind: 'number', description: 'Price, two decimals' },
    { upstream: 'status', name: 'status', kind: 'string', description: 'Status, e.g. Finish' },
    { upstream: 'party', name: 'containerCount', kind: 'integer', description: 'Number of containers (the hub\'s "party")' },
    { upstream: 'url', name: 'documentUrl', kind: 'text', nullable: true, description: 'Document address' },
    { upstream: 'is_finished', name: 'finished', kind: 'flag', description: 'Finished (finalized)' },
    { upstream: 'payment_url', name: 'paymentUrl', kind: 'text', nullable: true, description: 'Payment address' },
    { upstream: 'id_document', name: 'customsDocumentId', kind: 'integer', description: 'Id of the customs document (equals customsDocument.documentId; not the SP2 document\'s id, `sp2Id`)' },
    { upstream: 'td_document', name: 'customsDocument', kind: TdDocument, description: 'The customs document the SP2 releases' },
    { upstream: 'mst_platform', name: 'platform', kind: Platform, description: 'Platform' },
    { upstream: 'container', name: 'containers', kind: { arrayOf: Sp2Container }, description: 'Containers' },
    { upstream: 'sp2_log', name: 'logs', kind: { arrayOf: Sp2Log }, description: 'Status log' }
  ]
}

/*
 * The answers of the writes, which the hub's description does not show
 * (docs/hub.md#open-points).
 * Each names the write in the API's words, as the /v1/events messages do: the
 * gateway fills these fields from the request the hub accepted
 * (`fromRequest`), so they are there whatever the hub echoes; the hub's own
 * text is `upstreamMessage`; the hub's echoes of our fields, where it sends
 * them, map onto the same names, and anything else it adds is kept, camelCased.
 */
const upstreamMessage: FieldSpec = { upstream: 'message', name: 'upstreamMessage', kind: 'string', description: 'The hub\'s own message, as it wrote it (Indonesian, as a rule), when it sent one' }

export const OfferAnswer: ResourceSpec = {
  id: 'OfferAnswer',
  title: 'Offer, as the hub accepted it',
  source: `the answer of DetilBooking, which the description does not show (${OPEN_PAGE})`,
  fields: [
    { upstream: 'idRequestBooking', name: 'bookingRequestId', kind: 'string', fromRequest: true, description: 'Booking request code' },
    { upstream: 'idServiceOrder', name: 'serviceOrderId', kind: 'string', fromRequest: true, description: 'Sequence number of the offer' },
    { upstream: 'hargaPenawaran', name: 'price', kind: 'number', fromRequest: true, description: 'Offered price' },
    { upstream: 'waktuPenawaran', name: 'offeredAt', kind: 'datetime', fromRequest: true, description: 'When the offer was made, in the hub\'s local time (the instant the caller sent)' },
    upstreamMessage
  ]
}

export const BookedAnswer: ResourceSpec = {
  id: 'BookedAnswer',
  title: 'Booked notification, as the hub accepted it',
  source: `the answer of DetilBooking/isBooked, not shown either (${OPEN_PAGE})`,
  fields: [
    { upstream: 'idRequestBooking', name: 'bookingRequestId', kind: 'string', fromRequest: true, description: 'Booking request code' },
    { upstream: 'isBooked', name: 'booked', kind: 'flag', fromRequest: true, description: 'Whether the booking is made, as sent' },
    { upstream: 'booking_note', name: 'note', kind: 'string', fromRequest: true, description: 'Booking note, as sent (empty when left out)' },
    upstreamMessage
  ]
}

export const FinalizationAnswer: ResourceSpec = {
  id: 'FinalizationAnswer',
  title: 'SP2 finalization, as the hub accepted it',
  source: `the answer of document_sp2/final, not shown either (${OPEN_PAGE})`,
  fields: [
    { upstream: 'id_document_sp2', name: 'sp2Id', kind: 'string', format: 'uuid', fromRequest: true, description: 'SP2 document id' },
    { upstream: 'is_finished', name: 'finished', kind: 'flag', fromRequest: true, description: 'Finished: the hub\'s own flag when it sends one, else true (the hub accepted the finalization)' },
    { upstream: 'status', name: 'status', kind: 'string', description: 'The document\'s status, when the hub sends it, e.g. Finish' },
    upstreamMessage
  ]
}

export const ALL_RESOURCES: ResourceSpec[] = [
  BlEntry, Bc20Declaration, CustomsContainer, Sp2Document, TdDocument, DocumentType, ProcessType,
  UserDocument, Platform, PlatformService, Sp2Container, CargoOwnerContainer, Sp2Log, OfferAnswer, BookedAnswer, FinalizationAnswer
]
