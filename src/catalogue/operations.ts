import { Bc20Declaration, BlEntry, BookedAnswer, CargoOwnerContainer, CustomsContainer, FinalizationAnswer, OfferAnswer, Sp2Document } from './resources.ts'
import type { CredentialHeader, DocumentType, HubOperation, OperationParam } from './types.ts'

/**
 * The catalogue: every hub operation the gateway knows, described once, as
 * data, with the route it backs. Routes, their schemas, the OpenAPI
 * document, docs/reference/ (the glossary, the hub operations, the profile's
 * members) and the tests are driven from this table. Where the hub's
 * documentation leaves something open the value here is the default, which a
 * hub profile changes per operation (docs/hub.md#hub-profiles). ARCHITECTURE.md
 * says how to add an operation.
 */

const BOTH: readonly CredentialHeader[] = ['apiKey', 'authorization']
const npwp: OperationParam = { name: 'npwp', upstream: 'npwp', kind: 'npwp' }
const noBl: OperationParam = { name: 'blNo', upstream: 'noBl', kind: 'blNo' }
const tglBl: OperationParam = { name: 'blDate', upstream: 'tglBl', kind: 'blDate' }

/** A BL list of one customs document type: `GET /v1/customs/{type}/bills-of-lading?npwp=`. */
function blList<const Id extends string, const D extends DocumentType> (id: Id, documentType: D, key: string) {
  const { label } = documentType
  return {
    id,
    kind: 'bl-list',
    title: `${label} bills of lading of a taxpayer`,
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: `${id}/`,
    params: [npwp],
    headers: BOTH,
    response: { type: 'keyed-list', key, item: BlEntry },
    documentType,
    route: {
      method: 'GET',
      url: `/v1/customs/${documentType.code}/bills-of-lading`,
      scope: 'customs:read',
      tag: 'customs',
      summary: `${label} bills of lading of a taxpayer`,
      description: `Lists the ${label} bills of lading registered for a taxpayer (NPWP). An empty list is a 200 with \`data: []\`.`
    }
  } as const satisfies HubOperation
}

/**
 * The containers of a BL of one customs document type:
 * `GET /v1/customs/{type}/containers`, taking exactly the parameters the
 * hub's operation takes. `examples` is a BL of the sandbox with containers
 * in this list, so that the route's documented example answers with data.
 */
function containerList<const Id extends string, const D extends DocumentType> (id: Id, documentType: D, params: readonly OperationParam[], key: string, examples: { blNo: string, blDate: string }, note?: string) {
  const { label } = documentType
  return {
    id,
    kind: 'container-list',
    title: `Containers of a ${label} bill of lading`,
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: `${id}/`,
    params,
    // A hub may take the BL's number and date where the default reading lists one of them.
    alsoTakes: (['blNo', 'blDate'] as const).filter(kind => !params.some(p => p.kind === kind)),
    headers: BOTH,
    response: { type: 'keyed-list', key, item: CustomsContainer },
    documentType,
    route: {
      method: 'GET',
      url: `/v1/customs/${documentType.code}/containers`,
      scope: 'customs:read',
      tag: 'customs',
      summary: `Containers of a ${label} document`,
      examples,
      description: `Lists the containers of a ${label} bill of lading. The route takes exactly the parameters the hub's operation takes. The hub's list key is not ours to keep: the list is always under \`data\`.`
    },
    ...(note === undefined ? {} : { note })
  } as const satisfies HubOperation
}

export const OPERATIONS = [
  blList('noblbc16', { code: 'bc16', label: 'BC 1.6' }, 'Data BL BC 1.6'),
  blList('noblbc20', { code: 'bc20', label: 'BC 2.0' }, 'Data BL BC 2.0'),
  blList('noblbc23', { code: 'bc23', label: 'BC 2.3' }, 'Data BL BC23'),
  {
    id: 'BC20ByNoPib',
    kind: 'lookup',
    title: 'BC 2.0 declaration by PIB number',
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: 'BC20ByNoPib/',
    params: [npwp, { name: 'pibNo', upstream: 'nopib', kind: 'pibNo' }],
    headers: BOTH,
    response: { type: 'record', item: Bc20Declaration },
    route: {
      method: 'GET',
      url: '/v1/customs/bc20/declarations/:pibNo',
      scope: 'customs:read',
      pathParams: ['pibNo'],
      tag: 'customs',
      summary: 'BC 2.0 declaration by PIB number',
      description: 'One BC 2.0 import declaration (PIB) of a taxpayer. UPSTREAM_NOT_FOUND when the hub does not know it.'
    }
  },
  {
    id: 'BC20ByNoBL',
    kind: 'lookup',
    title: 'BC 2.0 declarations by bill of lading number',
    method: 'GET',
    service: 'hub',
    area: 'lookup',
    path: 'BC20ByNoBL/',
    params: [{ name: 'blNo', upstream: 'nobl', kind: 'blNo' }],
    alsoTakes: ['npwp', 'blDate'],
    headers: ['authorization'],
    response: { type: 'records', item: Bc20Declaration },
    route: {
      method: 'GET',
      url: '/v1/customs/bc20/declarations',
      scope: 'customs:read',
      tag: 'customs',
      summary: 'BC 2.0 declarations by bill of lading',
      description: 'The BC 2.0 import declarations filed against a bill of lading; ' +
        'an empty list when it has none.'
    },
    note: 'The hub\'s documentation shows neither its parameters nor its answer. ' +
      'Default: one parameter `nobl`; the answer may be one record or an array of BC 2.0 ' +
      'records, always answered as a list. A BL without declarations: an empty list, or a 404 ' +
      'where the profile says the hub answers so (`notFound`).'
  },
  containerList('kontainerbc20', { code: 'bc20', label: 'BC 2.0' }, [tglBl], 'data kontainer bc 20', { blNo: 'COSUMKS9061740', blDate: '2024-02-17' },
    'The hub\'s documentation shows neither its headers nor its response key. Default: both credential headers and the key `data kontainer bc 20`.'),
  containerList('kontainerbc23', { code: 'bc23', label: 'BC 2.3' }, [noBl, tglBl], 'Data Kontainer BC16', { blNo: 'MEDUSUB5040963', blDate: '2024-02-01' },
    'BC 2.3 really answers under `Data Kontainer BC16`.'),
  containerList('kontainerbc25', { code: 'bc25', label: 'BC 2.5' }, [tglBl], 'data kontainer bc 25', { blNo: 'MAEUBLW6710432', blDate: '2024-04-17' },
    'The hub\'s documentation does not show the form of tglBl; YYYYMMDD by default.'),
  containerList('kontainerbc261', { code: 'bc261', label: 'BC 2.6.1' }, [noBl], 'data kontainer bc 261', { blNo: 'CMDUSUB0324491', blDate: '2024-06-05' }),
  containerList('kontainerbc262', { code: 'bc262', label: 'BC 2.6.2' }, [noBl], 'data kontainer bc 262', { blNo: 'EGLVSRG3533178', blDate: '2024-01-11' }),
  containerList('kontainerbc27', { code: 'bc27', label: 'BC 2.7' }, [tglBl], 'data status impor', { blNo: 'ONEYSRG4551477', blDate: '2024-01-18' },
    'BC 2.7 answers under `data status impor`.'),
  containerList('kontainerbc28', { code: 'bc28', label: 'BC 2.8' }, [noBl], 'data kontainer bc 28', { blNo: 'HLCUBLW6951652', blDate: '2024-05-05' }),
  containerList('kontainerbc30', { code: 'bc30', label: 'BC 3.0' }, [noBl, tglBl], 'Data Kontainer SP3B', { blNo: 'OOLUJKT2150806', blDate: '2024-02-04' },
    'BC 3.0 answers under `Data Kontainer SP3B`; the hub\'s documentation does not show the forms of noBl and tglBl.'),
  containerList('kontainersp3b', { code: 'sp3b', label: 'SP3B' }, [noBl, tglBl], 'Data Kontainer SP3B', { blNo: 'HLCUSRG5508709', blDate: '2024-04-21' }),
  containerList('kontainerPPFTZ', { code: 'ppftz', label: 'PPFTZ' }, [noBl, tglBl], 'Data Kontainer PPFTZ', { blNo: 'EGLVBLW8716404', blDate: '2024-05-13' }),
  {
    id: 'document_sp2_container/cargo_owner',
    kind: 'lookup',
    title: 'Containers of a cargo owner\'s SP2 document',
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
    response: { type: 'list', item: CargoOwnerContainer },
    route: {
      method: 'GET',
      url: '/v1/sp2/containers',
      scope: 'sp2:read',
      tag: 'sp2',
      summary: 'Containers of a cargo owner\'s SP2 document',
      description: 'The SP2 container records of one container of a cargo owner\'s bill of lading.'
    }
  },
  {
    id: 'document_sp2/host-to-host',
    kind: 'lookup',
    title: 'SP2 documents of a cargo owner',
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
    response: { type: 'list', item: Sp2Document },
    route: {
      method: 'GET',
      url: '/v1/sp2/documents',
      scope: 'sp2:read',
      tag: 'sp2',
      summary: 'SP2 documents of a cargo owner',
      description: 'The SP2 documents of a cargo owner for a bill of lading, with their customs document, platform, containers and status log, normalized all the way down.'
    }
  },
  {
    id: 'document_sp2/final',
    kind: 'write',
    title: 'Finalize an SP2 document',
    method: 'POST',
    service: 'base',
    area: 'sp2',
    path: 'document_sp2/final/',
    params: [],
    alsoTakes: ['sp2Id'],
    headers: ['authorization'],
    response: { type: 'record', item: FinalizationAnswer },
    route: {
      method: 'POST',
      url: '/v1/sp2/documents/:sp2Id/finalization',
      scope: 'sp2:finalize',
      idParam: 'sp2Id',
      tag: 'sp2',
      summary: 'Finalize an SP2 document',
      operationId: 'postSp2DocumentFinalization',
      description: 'Asks the hub to finalize an SP2 document. It takes no body: send none, or `{}`. Never retried automatically.',
      answer: 'The finalization, as the hub accepted it'
    },
    requestBody: {
      note: 'The hub\'s documentation does not show the payload; this is the gateway\'s default',
      fields: [
        { upstream: 'id_document_sp2', gateway: 'sp2Id', conversion: 'string (UUID), from the path', description: 'SP2 document id' }
      ]
    },
    note: 'The hub\'s documentation shows neither the payload nor the answer. Default payload `{"id_document_sp2": "<id>"}`; the answer names the finalization in the API\'s words, the hub\'s text in `upstreamMessage`.'
  },
  {
    id: 'DetilBooking',
    kind: 'write',
    title: 'Post a price offer (API-02)',
    method: 'POST',
    service: 'base',
    area: 'booking',
    path: 'DetilBooking/',
    params: [],
    alsoTakes: ['bookingRequestId'],
    headers: ['apiKey'],
    response: { type: 'record', item: OfferAnswer },
    route: {
      method: 'POST',
      url: '/v1/bookings/:bookingRequestId/offers',
      scope: 'bookings:write',
      idParam: 'bookingRequestId',
      tag: 'bookings',
      summary: 'Post a price offer',
      operationId: 'postBookingOffer',
      description: 'Posts a truck platform\'s price offer against a booking request. The platform id comes from configuration and the hub\'s `timestamp` is filled by the gateway.',
      answer: 'The offer, as the hub accepted it'
    },
    requestBody: {
      fields: [
        { upstream: 'idRequestBooking', gateway: 'bookingRequestId', conversion: 'string, from the path', description: 'Booking request code (from the hub\'s API-01)' },
        { upstream: 'idPlatform', gateway: 'PLATFORM_ID', conversion: 'string, from configuration', description: 'Platform code of this gateway\'s operator; never taken from the caller' },
        { upstream: 'idServiceOrder', gateway: 'serviceOrderId', conversion: 'string', description: 'Sequence number of the offer' },
        { upstream: 'hargaPenawaran', gateway: 'price', conversion: 'number, at most two decimals', description: 'Offered price' },
        { upstream: 'waktuPenawaran', gateway: 'offeredAt', conversion: 'ISO date-time with offset → `YYYY-MM-DD HH:MM:SS` in the hub\'s local time', description: 'When the offer was made' },
        { upstream: 'timestamp', gateway: '(filled by the gateway)', conversion: 'time of sending → `YYYY-MM-DD HH:MM:SS` in the hub\'s local time', description: 'When the data was sent' }
      ]
    },
    note: 'Only the API key is listed for it; whether Authorization is required is not shown ' +
      '(a hub profile\'s `credentials` adds it).'
  },
  {
    id: 'DetilBooking/isBooked',
    kind: 'write',
    title: 'Send a booked notification (API-04)',
    method: 'POST',
    service: 'base',
    area: 'booking',
    path: 'DetilBooking/isBooked/',
    params: [{ name: 'bookingRequestId', upstream: 'idRequestBooking', kind: 'bookingRequestId', alwaysQuery: true }],
    headers: BOTH,
    response: { type: 'record', item: BookedAnswer },
    route: {
      method: 'POST',
      url: '/v1/bookings/:bookingRequestId/booked',
      scope: 'bookings:write',
      idParam: 'bookingRequestId',
      tag: 'bookings',
      summary: 'Send a booked notification',
      operationId: 'postBookingBooked',
      description: 'Tells the hub a booking request is booked. On success the notification goes to `GET /v1/events`, a `BookedEvent` whose `data` describes the booking as this answer does: `bookingRequestId`, `booked` and `note`, the same names and values. It reaches this client\'s own sockets, and those of clients allowed to see every event.',
      answer: 'The booked notification, as the hub accepted it: the `data` of the event it causes, and the hub\'s message'
    },
    requestBody: {
      fields: [
        { upstream: 'isBooked', gateway: 'booked', conversion: 'boolean → 1/0', description: 'Whether the booking is made' },
        { upstream: 'booking_note', gateway: 'note', conversion: 'string; empty when left out', description: 'Booking note' }
      ]
    }
  }
] as const satisfies readonly HubOperation[]

export type OperationId = typeof OPERATIONS[number]['id']

export type CatalogueEntry = typeof OPERATIONS[number]

const BY_ID: ReadonlyMap<string, HubOperation> = new Map(OPERATIONS.map(op => [op.id, op]))

/** The catalogue's entry of an operation. */
export function operationOf (id: OperationId): HubOperation {
  const op = BY_ID.get(id)
  if (op === undefined) throw new Error(`unknown operation ${id}`)
  return op
}

/** The entries of one kind, in catalogue order. */
export function operationsOf<K extends CatalogueEntry['kind']> (kind: K): Array<Extract<CatalogueEntry, { kind: K }>> {
  return OPERATIONS.filter((op): op is Extract<CatalogueEntry, { kind: K }> => op.kind === kind)
}

/** Every customs document type the catalogue has a BL list or a container list of, in catalogue order (`bc16`, `bc20`, …). */
export const DOCUMENT_TYPES: readonly DocumentType[] = [...new Map([...operationsOf('bl-list'), ...operationsOf('container-list')]
  .map(op => [op.documentType.code, op.documentType])).values()]
