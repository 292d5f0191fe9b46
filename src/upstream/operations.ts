import type { ResourceSpec } from '../mapping/resource-spec.ts'
import { Bc20Declaration, BlEntry, BookedAnswer, CargoOwnerContainer, CustomsContainer, FinalizationAnswer, OfferAnswer, Sp2Document } from '../mapping/resources.ts'

/**
 * Every hub operation of interface.md 4.1-4.9, described once, as data.
 * Routes, their schemas, the OpenAPI document and the tests are driven from
 * this table. Where interface.md leaves something open (4.10) the value here
 * is the default; UPSTREAM_OPERATIONS overrides it per operation.
 */

/** Which configured address an operation lives under. */
export type Service = 'hub' | 'base'

/**
 * Address prefix family (interface.md 9): lookups are always `V1/HUB/INT/AUTH`;
 * booking and SP2 have a production (`V3/HUB`) and a development (`HUB-DEV`) prefix.
 */
export type Area = 'lookup' | 'sp2' | 'booking'

/** Gateway-side parameter kinds, each with one validation schema (schemas/params.ts). */
export type ParamKind = 'npwp' | 'blNo' | 'blDate' | 'containerNo' | 'pibNo' | 'bookingRequestId'

export interface OperationParam {
  /** Gateway name (query or path parameter of our route). */
  name: string
  /** Upstream name. */
  upstream: string
  kind: ParamKind
  /** Always sent in the query string, whatever UPSTREAM_PARAM_PLACEMENT says (4.9 shows `?idRequestBooking=`). */
  alwaysQuery?: boolean
}

export type CredentialHeader = 'apiKey' | 'authorization'

export type ResponseShape =
  /** An object with one array under `key` (4.6, 4.7). */
  | { type: 'keyed-list', key: string, item: ResourceSpec }
  /** A bare array (4.1, 4.3). */
  | { type: 'list', item: ResourceSpec }
  /** One object (4.4). */
  | { type: 'record', item: ResourceSpec }
  /** Not shown by interface.md: one object or an array of them, answered as a list (4.5). */
  | { type: 'records', item: ResourceSpec }

export interface Operation {
  /** The upstream operation name; the key of UPSTREAM_OPERATIONS overrides and of metrics. */
  id: string
  title: string
  /** The section of interface.md that describes it. */
  section: string
  method: 'GET' | 'POST'
  service: Service
  area: Area
  /** Address after the area prefix, with the trailing slash interface.md shows. */
  path: string
  /** In the order interface.md lists them: that order is also the path-segment order. */
  params: OperationParam[]
  headers: CredentialHeader[]
  response: ResponseShape
  /** Why this entry looks the way it does, where interface.md is odd or silent. */
  note?: string
}

const BOTH: CredentialHeader[] = ['apiKey', 'authorization']
const npwp: OperationParam = { name: 'npwp', upstream: 'npwp', kind: 'npwp' }
const noBl: OperationParam = { name: 'blNo', upstream: 'noBl', kind: 'blNo' }
const tglBl: OperationParam = { name: 'blDate', upstream: 'tglBl', kind: 'blDate' }

function blList (id: string, label: string, key: string): Operation {
  return {
    id,
    title: `${label} bills of lading of a taxpayer`,
    section: '4.6',
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: `${id}/`,
    params: [npwp],
    headers: BOTH,
    response: { type: 'keyed-list', key, item: BlEntry }
  }
}

function containerList (id: string, label: string, params: OperationParam[], key: string, note?: string): Operation {
  return {
    id,
    title: `Containers of a ${label} bill of lading`,
    section: '4.7',
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: `${id}/`,
    params,
    headers: BOTH,
    response: { type: 'keyed-list', key, item: CustomsContainer },
    ...(note === undefined ? {} : { note })
  }
}

export const OPERATIONS = [
  blList('noblbc16', 'BC 1.6', 'Data BL BC 1.6'),
  blList('noblbc20', 'BC 2.0', 'Data BL BC 2.0'),
  blList('noblbc23', 'BC 2.3', 'Data BL BC23'),
  {
    id: 'BC20ByNoPib',
    title: 'BC 2.0 declaration by PIB number',
    section: '4.4',
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: 'BC20ByNoPib/',
    params: [npwp, { name: 'pibNo', upstream: 'nopib', kind: 'pibNo' }],
    headers: BOTH,
    response: { type: 'record', item: Bc20Declaration }
  },
  {
    id: 'BC20ByNoBL',
    title: 'BC 2.0 declarations by bill of lading number',
    section: '4.5',
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: 'BC20ByNoBL/',
    params: [{ name: 'blNo', upstream: 'nobl', kind: 'blNo' }],
    headers: ['authorization'],
    response: { type: 'records', item: Bc20Declaration },
    note: 'interface.md 4.10.3: parameters and response not shown. Default: one parameter `nobl`; the answer may be one record or an array of BC 2.0 records (2.8), always answered as a list.'
  },
  containerList('kontainerbc20', 'BC 2.0', [tglBl], 'data kontainer bc 20',
    'interface.md 4.10.4: headers and response key not shown. Default: both credential headers and the key `data kontainer bc 20`.'),
  containerList('kontainerbc23', 'BC 2.3', [noBl, tglBl], 'Data Kontainer BC16',
    'interface.md 4.7: BC 2.3 really answers under `Data Kontainer BC16`.'),
  containerList('kontainerbc25', 'BC 2.5', [tglBl], 'data kontainer bc 25',
    'interface.md 4.10.8: tglBl format not shown; YYYYMMDD by default.'),
  containerList('kontainerbc261', 'BC 2.6.1', [noBl], 'data kontainer bc 261'),
  containerList('kontainerbc262', 'BC 2.6.2', [noBl], 'data kontainer bc 262'),
  containerList('kontainerbc27', 'BC 2.7', [tglBl], 'data status impor',
    'interface.md 4.7: BC 2.7 answers under `data status impor`.'),
  containerList('kontainerbc28', 'BC 2.8', [noBl], 'data kontainer bc 28'),
  containerList('kontainerbc30', 'BC 3.0', [noBl, tglBl], 'Data Kontainer SP3B',
    'interface.md 4.7: BC 3.0 answers under `Data Kontainer SP3B`; 4.10.8: noBl and tglBl formats not shown.'),
  containerList('kontainersp3b', 'SP3B', [noBl, tglBl], 'Data Kontainer SP3B'),
  containerList('kontainerPPFTZ', 'PPFTZ', [noBl, tglBl], 'Data Kontainer PPFTZ'),
  {
    id: 'document_sp2_container/cargo_owner',
    title: 'Containers of a cargo owner\'s SP2 document',
    section: '4.1',
    method: 'GET',
    service: 'base',
    area: 'sp2',
    path: 'document_sp2_container/cargo_owner/',
    params: [
      { name: 'blDate', upstream: 'bl_date', kind: 'blDate' },
      { name: 'containerNo', upstream: 'container_no', kind: 'containerNo' },
      { name: 'npwp', upstream: 'npwp_cargo_owner', kind: 'npwp' },
      { name: 'blNo', upstream: 'bl_no', kind: 'blNo' }
    ],
    headers: BOTH,
    response: { type: 'list', item: CargoOwnerContainer }
  },
  {
    id: 'document_sp2/host-to-host',
    title: 'SP2 documents of a cargo owner',
    section: '4.3',
    method: 'GET',
    service: 'base',
    area: 'sp2',
    path: 'document_sp2/host-to-host/',
    params: [
      { name: 'npwp', upstream: 'npwp_cargo_owner', kind: 'npwp' },
      { name: 'blNo', upstream: 'bl_no', kind: 'blNo' },
      { name: 'blDate', upstream: 'bl_date', kind: 'blDate' }
    ],
    headers: BOTH,
    response: { type: 'list', item: Sp2Document }
  },
  {
    id: 'document_sp2/final',
    title: 'Finalize an SP2 document',
    section: '4.2',
    method: 'POST',
    service: 'base',
    area: 'sp2',
    path: 'document_sp2/final/',
    params: [],
    headers: ['authorization'],
    response: { type: 'record', item: FinalizationAnswer },
    note: 'interface.md 4.10.2: payload and response not shown. Default payload `{"id_document_sp2": "<id>"}`; the answer names the finalization in the API\'s words, the hub\'s text in `upstreamMessage`.'
  },
  {
    id: 'DetilBooking',
    title: 'Post a price offer (API-02)',
    section: '4.8',
    method: 'POST',
    service: 'base',
    area: 'booking',
    path: 'DetilBooking/',
    params: [],
    headers: ['apiKey'],
    response: { type: 'record', item: OfferAnswer },
    note: 'interface.md 5.2: only the API key is listed; 4.10.5: whether Authorization is required is not shown (add it with UPSTREAM_OPERATIONS).'
  },
  {
    id: 'DetilBooking/isBooked',
    title: 'Send a booked notification (API-04)',
    section: '4.9',
    method: 'POST',
    service: 'base',
    area: 'booking',
    path: 'DetilBooking/isBooked/',
    params: [{ name: 'bookingRequestId', upstream: 'idRequestBooking', kind: 'bookingRequestId', alwaysQuery: true }],
    headers: BOTH,
    response: { type: 'record', item: BookedAnswer }
  }
] as const satisfies readonly Operation[]

export type OperationId = typeof OPERATIONS[number]['id']
