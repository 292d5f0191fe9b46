import type { Answer } from './answer.ts'
import { postBooked, postOffer } from './booking.ts'
import { CONTAINER_OPERATIONS } from './container-operations.ts'
import type { OperationContext, ParamKind } from './context.ts'
import { bc20ByNoBl, bc20ByNoPib, blList, containerList } from './lookups.ts'
import { cargoOwnerContainers, finalize, hostToHost } from './sp2.ts'

// The hub's operations as data (docs/hub.md#operations): address, parameters in the
// order of the document's tables, required headers, response shape, handler.

/**
 * lookup: {hub_url}/V1/<SEG>/INT/AUTH/... only (no development prefix).
 * sp2 and booking: {base_url}/<SEG>-DEV/... and the production {base_url}/V3/<SEG>/...
 * (a hub profile gives each area its own prefix).
 */
export type Area = 'lookup' | 'sp2' | 'booking'

export interface ParamSpec {
  /** The hub's name. */
  name: string
  kind: ParamKind
  /** date: `YYYYMMDD`, eight digits (a profile's `dateSent` may say `YYYY-MM-DD`). */
  format: 'text' | 'date'
  /** false: only the query string carries it (isBooked's idRequestBooking). */
  inPath: boolean
}

/** The response shape, which the fault injectors imitate or break. */
export type Shape =
  /** `{key: [...]}`: a list under a key. */
  | { kind: 'keyed', key: string, driftKey: string }
  | { kind: 'array' }
  | { kind: 'object' }
  /** `{key: {...}}`: a record under a key (a hub profile's `answerKey`). */
  | { kind: 'wrapped', key: string }

export interface Operation {
  /** Recorded as RecordedRequest.operation. */
  name: string
  method: 'GET' | 'POST'
  area: Area
  /** Address segments after the prefix. */
  path: readonly string[]
  params: readonly ParamSpec[]
  /**
   * Every kind of parameter the handler reads: its own, and those a variant
   * of the hub is known to send besides (a profile's `params` may name them).
   */
  accepts: readonly ParamKind[]
  auth: { apiKey: boolean, token: boolean }
  shape: Shape
  handle (ctx: OperationContext): Answer
}

const text = (name: string, kind: ParamKind): ParamSpec => ({ name, kind, format: 'text', inPath: true })
const date = (name: string, kind: ParamKind = 'blDate'): ParamSpec => ({ name, kind, format: 'date', inPath: true })
const BOTH = { apiKey: true, token: true }

const blLists: Operation[] = ([
  ['noblbc23', 'bc23', 'Data BL BC23'],
  ['noblbc20', 'bc20', 'Data BL BC 2.0'],
  ['noblbc16', 'bc16', 'Data BL BC 1.6']
] as const).map(([name, type, key]) => ({
  name,
  method: 'GET',
  area: 'lookup',
  path: [name],
  params: [text('npwp', 'npwp')],
  accepts: ['npwp'],
  auth: BOTH,
  shape: { kind: 'keyed', key, driftKey: 'data bl' },
  handle: blList(type, key)
}))

// kontainerbc20's headers are open (docs/hub.md#open-points); it is held to the same two
// headers as its siblings.
const containerLists: Operation[] = CONTAINER_OPERATIONS.map((spec) => ({
  name: spec.name,
  method: 'GET',
  area: 'lookup',
  path: [spec.name],
  params: spec.params.map((name) => name === 'tglBl' ? date(name) : text(name, 'blNo')),
  // Some callers send both the BL number and its date to every container list.
  accepts: ['blNo', 'blDate'],
  auth: BOTH,
  shape: { kind: 'keyed', key: spec.key, driftKey: 'data kontainer' },
  handle: containerList(spec)
}))

export const OPERATIONS: readonly Operation[] = [
  ...blLists,
  ...containerLists,
  {
    name: 'BC20ByNoPib',
    method: 'GET',
    area: 'lookup',
    path: ['BC20ByNoPib'],
    params: [text('npwp', 'npwp'), text('nopib', 'pibNo')],
    accepts: ['npwp', 'pibNo'],
    auth: BOTH,
    shape: { kind: 'object' },
    handle: bc20ByNoPib
  },
  {
    // Only Authorization is listed for it (docs/hub.md#addresses-and-credentials).
    name: 'BC20ByNoBL',
    method: 'GET',
    area: 'lookup',
    path: ['BC20ByNoBL'],
    params: [text('nobl', 'blNo')],
    // Some callers send the taxpayer and the BL date besides the BL number.
    accepts: ['blNo', 'npwp', 'blDate'],
    auth: { apiKey: false, token: true },
    shape: { kind: 'array' },
    handle: bc20ByNoBl
  },
  {
    name: 'document_sp2_container/cargo_owner',
    method: 'GET',
    area: 'sp2',
    path: ['document_sp2_container', 'cargo_owner'],
    params: [date('bl_date'), text('container_no', 'containerNo'), text('npwp_cargo_owner', 'npwp'), text('bl_no', 'blNo')],
    accepts: ['blDate', 'containerNo', 'npwp', 'blNo'],
    auth: BOTH,
    shape: { kind: 'array' },
    handle: cargoOwnerContainers
  },
  {
    name: 'document_sp2/host-to-host',
    method: 'GET',
    area: 'sp2',
    path: ['document_sp2', 'host-to-host'],
    params: [text('npwp_cargo_owner', 'npwp'), text('bl_no', 'blNo'), date('bl_date')],
    accepts: ['npwp', 'blNo', 'blDate'],
    auth: BOTH,
    shape: { kind: 'array' },
    handle: hostToHost
  },
  {
    // Only Authorization is listed for it (docs/hub.md#addresses-and-credentials).
    name: 'document_sp2/final',
    method: 'POST',
    area: 'sp2',
    path: ['document_sp2', 'final'],
    params: [],
    // A variant may name the document in its address rather than the body.
    accepts: ['sp2Id'],
    auth: { apiKey: false, token: true },
    shape: { kind: 'object' },
    handle: finalize
  },
  {
    // Only the API key is listed for it (docs/hub.md#addresses-and-credentials); an
    // Authorization header is ignored.
    name: 'DetilBooking',
    method: 'POST',
    area: 'booking',
    path: ['DetilBooking'],
    params: [],
    // A variant may name the booking request in its address besides the body.
    accepts: ['bookingRequestId'],
    auth: { apiKey: true, token: false },
    shape: { kind: 'object' },
    handle: postOffer
  },
  {
    name: 'DetilBooking/isBooked',
    method: 'POST',
    area: 'booking',
    path: ['DetilBooking', 'isBooked'],
    params: [{ name: 'idRequestBooking', kind: 'bookingRequestId', format: 'text', inPath: false }],
    accepts: ['bookingRequestId'],
    auth: BOTH,
    shape: { kind: 'object' },
    handle: postBooked
  }
]
