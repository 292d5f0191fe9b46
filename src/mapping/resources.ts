import type { FieldSpec, ResourceSpec } from './resource.ts'

// interface.md 2.9
export const BlEntry: ResourceSpec = {
  id: 'BillOfLading',
  title: 'Bill of lading list entry',
  source: 'interface.md 2.9',
  required: ['bl_no'],
  fields: [
    { upstream: 'bl_no', name: 'blNo', kind: 'string', description: 'Bill of lading number' },
    { upstream: 'bl_date', name: 'blDate', dateTimeName: 'blDateTime', kind: 'date-with-time', description: 'Bill of lading date' }
  ]
}

// interface.md 2.8: every field is a string upstream.
export const Bc20Declaration: ResourceSpec = {
  id: 'Bc20Declaration',
  title: 'BC 2.0 customs declaration (PIB)',
  source: 'interface.md 2.8',
  required: ['no_pib'],
  fields: [
    { upstream: 'car', name: 'car', kind: 'string', description: 'CAR, the customs application reference (nomor aju)' },
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

// interface.md 2.12: the element content of container lists is not shown.
// These are the names seen in practice; anything else is kept, camelCased.
export const CustomsContainer: ResourceSpec = {
  id: 'CustomsContainer',
  title: 'Container of a customs document',
  source: 'interface.md 4.7 (elements not shown)',
  fields: [
    { upstream: 'no_kontainer', name: 'containerNo', kind: 'string', description: 'Container number (ISO 6346)' },
    { upstream: 'ukuran_kontainer', name: 'containerSize', kind: 'text', description: 'Container size, e.g. 20 or 40' },
    { upstream: 'jenis_kontainer', name: 'containerType', kind: 'string', description: 'Container type' },
    { upstream: 'no_bl', name: 'blNo', kind: 'string', description: 'Bill of lading number' },
    { upstream: 'tgl_bl', name: 'blDate', kind: 'date', description: 'Bill of lading date' }
  ]
}

const sp2ContainerFields: FieldSpec[] = [
  { upstream: 'id_sp2_container', name: 'sp2ContainerId', kind: 'integer', description: 'SP2 container id' },
  { upstream: 'container_no', name: 'containerNo', kind: 'string', description: 'Container number' },
  { upstream: 'container_size', name: 'containerSize', kind: 'string', description: 'Container size' },
  { upstream: 'container_type', name: 'containerType', kind: 'string', description: 'Container type' },
  { upstream: 'gate_pass', name: 'gatePass', kind: 'string', nullable: true, emptyAsNull: true, description: 'Gate pass; null when the hub sends null or an empty string' }
]

// interface.md 2.6
export const Sp2Container: ResourceSpec = {
  id: 'Sp2Container',
  title: 'Container of an SP2 document',
  source: 'interface.md 2.6',
  required: ['container_no'],
  fields: sp2ContainerFields
}

// interface.md 2.6, as answered by the cargo-owner lookup (4.1)
export const CargoOwnerContainer: ResourceSpec = {
  id: 'CargoOwnerContainer',
  title: 'Container of a cargo owner\'s SP2 document',
  source: 'interface.md 2.6 and 4.1',
  required: ['container_no'],
  fields: [
    ...sp2ContainerFields,
    { upstream: 'id_document_sp2', name: 'sp2Id', kind: 'string', format: 'uuid', description: 'SP2 document id' }
  ]
}

// interface.md 2.7
export const Sp2Log: ResourceSpec = {
  id: 'Sp2LogEntry',
  title: 'SP2 status log entry',
  source: 'interface.md 2.7',
  fields: [
    { upstream: 'id_sp2_log', name: 'sp2LogId', kind: 'integer', description: 'Log entry id' },
    { upstream: 'id_document_sp2', name: 'sp2Id', kind: 'string', description: 'SP2 document id' },
    { upstream: 'create_date', name: 'createdAt', kind: 'datetime', description: 'When the status was recorded' },
    { upstream: 'status', name: 'status', kind: 'string', description: 'Status, e.g. Finish' }
  ]
}

// interface.md 2.4
export const UserDocument: ResourceSpec = {
  id: 'DocumentUser',
  title: 'User with access to a document',
  source: 'interface.md 2.4',
  fields: [
    { upstream: 'id_user_document', name: 'userDocumentId', kind: 'integer', description: 'User-document link id' },
    { upstream: 'npwp', name: 'npwp', kind: 'string', description: 'User taxpayer number' },
    { upstream: 'name', name: 'name', kind: 'string', description: 'User name' },
    { upstream: 'access_do', name: 'doAccess', kind: 'flag', description: 'May use delivery orders' },
    { upstream: 'access_sp2', name: 'sp2Access', kind: 'flag', description: 'May use SP2' },
    { upstream: 'access_trucking', name: 'truckingAccess', kind: 'flag', description: 'May use trucking' },
    { upstream: 'access_warehouse', name: 'warehouseAccess', kind: 'flag', description: 'May use warehousing' },
    { upstream: 'access_depo', name: 'depotAccess', kind: 'flag', description: 'May use depots' },
    { upstream: 'access_domestic', name: 'domesticAccess', kind: 'flag', description: 'May use domestic services' },
    { upstream: 'is_ppjk', name: 'isCustomsBroker', kind: 'flag', description: 'User is a customs broker (PPJK)' }
  ]
}

// interface.md 2.3, mst_process_type
export const ProcessType: ResourceSpec = {
  id: 'ProcessType',
  title: 'Customs process type',
  source: 'interface.md 2.3',
  fields: [
    { upstream: 'kd_process_type', name: 'processTypeCode', kind: 'integer', description: 'Process type code' },
    { upstream: 'process_name', name: 'processName', kind: 'string', description: 'Process name' }
  ]
}

// interface.md 2.3
export const DocumentType: ResourceSpec = {
  id: 'DocumentType',
  title: 'Customs document type',
  source: 'interface.md 2.3',
  fields: [
    { upstream: 'kd_document_type', name: 'documentTypeCode', kind: 'integer', description: 'Document type code' },
    { upstream: 'kd_process_type', name: 'processTypeCode', kind: 'integer', description: 'Process type code' },
    { upstream: 'document_name', name: 'documentName', kind: 'string', description: 'Document name' },
    { upstream: 'description', name: 'description', kind: 'string', description: 'Description' },
    { upstream: 'containerAPI', name: 'containerApi', kind: 'string', description: 'Address of the hub\'s container lookup for this document type' },
    { upstream: 'mst_process_type', name: 'processType', kind: ProcessType, description: 'Process type' }
  ]
}

// interface.md 2.2
export const TdDocument: ResourceSpec = {
  id: 'CustomsDocument',
  title: 'Customs document of an SP2 document',
  source: 'interface.md 2.2',
  fields: [
    { upstream: 'id_document', name: 'documentId', kind: 'integer', description: 'Document id' },
    { upstream: 'kd_document_type', name: 'documentTypeCode', kind: 'integer', description: 'Document type code' },
    { upstream: 'document_no', name: 'documentNo', kind: 'string', description: 'Document number' },
    { upstream: 'document_date', name: 'documentDate', kind: 'date', description: 'Document date' },
    { upstream: 'document_status', name: 'documentStatus', kind: 'string', description: 'Document status, e.g. SPPB' },
    { upstream: 'bl_no', name: 'blNo', kind: 'string', description: 'Bill of lading number' },
    { upstream: 'bl_date', name: 'blDate', kind: 'date', description: 'Bill of lading date' },
    { upstream: 'finish_do', name: 'doFinished', kind: 'flag', description: 'Delivery order done' },
    { upstream: 'finish_trucking', name: 'truckingFinished', kind: 'flag', description: 'Trucking done' },
    { upstream: 'finish_sp2', name: 'sp2Finished', kind: 'flag', description: 'SP2 done' },
    { upstream: 'finish_warehouse', name: 'warehouseFinished', kind: 'flag', description: 'Warehousing done' },
    { upstream: 'finish_depo', name: 'depotFinished', kind: 'flag', description: 'Depot done' },
    { upstream: 'nm_cargoowner', name: 'cargoOwnerName', kind: 'string', description: 'Cargo owner name' },
    { upstream: 'npwp_cargo_owner', name: 'cargoOwnerNpwp', kind: 'string', description: 'Cargo owner taxpayer number' },
    { upstream: 'no_sppb', name: 'sppbNo', kind: 'string', description: 'SPPB (release approval) number' },
    { upstream: 'tanggal_sppb', name: 'sppbDate', kind: 'date', description: 'SPPB date' },
    { upstream: 'do_number', name: 'doNumber', kind: 'text', nullable: true, description: 'Delivery order number' },
    { upstream: 'do_date', name: 'doDate', kind: 'date', nullable: true, description: 'Delivery order date' },
    { upstream: 'mst_document_type', name: 'documentType', kind: DocumentType, description: 'Document type' },
    { upstream: 'user_document', name: 'users', kind: { arrayOf: UserDocument }, description: 'Users with access to the document' }
  ]
}

// interface.md 2.5
export const Platform: ResourceSpec = {
  id: 'Platform',
  title: 'Truck or logistics platform',
  source: 'interface.md 2.5',
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
    { upstream: 'mst_kantor', name: 'office', kind: 'json', nullable: true, description: 'Customs office (structure not shown by interface.md; passed on with camelCased keys)' },
    { upstream: 'mstPlatformServices', name: 'services', kind: { arrayOf: 'json' }, description: 'Platform services (element structure not shown by interface.md; passed on with camelCased keys)' }
  ]
}

// interface.md 2.1
export const Sp2Document: ResourceSpec = {
  id: 'Sp2Document',
  title: 'SP2 (delivery order release) document',
  source: 'interface.md 2.1',
  required: ['id_document_sp2'],
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
    { upstream: 'party', name: 'party', kind: 'integer', description: 'Party (number of containers)' },
    { upstream: 'url', name: 'url', kind: 'text', nullable: true, description: 'Document address' },
    { upstream: 'is_finished', name: 'isFinished', kind: 'flag', description: 'Finished' },
    { upstream: 'payment_url', name: 'paymentUrl', kind: 'text', nullable: true, description: 'Payment address' },
    { upstream: 'id_document', name: 'documentId', kind: 'integer', description: 'Customs document id (equals document.documentId)' },
    { upstream: 'td_document', name: 'document', kind: TdDocument, description: 'Customs document' },
    { upstream: 'mst_platform', name: 'platform', kind: Platform, description: 'Platform' },
    { upstream: 'container', name: 'containers', kind: { arrayOf: Sp2Container }, description: 'Containers' },
    { upstream: 'sp2_log', name: 'logs', kind: { arrayOf: Sp2Log }, description: 'Status log' }
  ]
}

/** Answers whose fields interface.md does not show (4.2, 4.8, 4.9): passed on, camelCased. */
export const HubAcknowledgement: ResourceSpec = {
  id: 'HubAcknowledgement',
  title: 'Acknowledgement from the hub',
  source: 'interface.md 4.10.2, 4.10.5, 4.10.6 (fields not shown)',
  fields: [
    { upstream: 'message', name: 'message', kind: 'string', description: 'The hub\'s message, when it sends one' }
  ]
}

export const ALL_RESOURCES: ResourceSpec[] = [
  BlEntry, Bc20Declaration, CustomsContainer, Sp2Document, TdDocument, DocumentType, ProcessType,
  UserDocument, Platform, Sp2Container, CargoOwnerContainer, Sp2Log, HubAcknowledgement
]
