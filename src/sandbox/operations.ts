import type { Answer } from './answer.ts'
import { postBooked, postOffer } from './booking.ts'
import { CONTAINER_OPERATIONS } from './container-operations.ts'
import type { OperationContext } from './context.ts'
import { bc20ByNoBl, bc20ByNoPib, blList, containerList } from './lookups.ts'
import { cargoOwnerContainers, finalize, hostToHost } from './sp2.ts'

// The hub's operations as data (docs/hub.md#operations): address, parameters in the
// order of the document's tables, required headers, response shape, handler.

/**
 * lookup: {hub_url}/V1/<SEG>/INT/AUTH/... only (no development prefix).
 * dev-or-v3: {base_url}/<SEG>-DEV/... and the production {base_url}/V3/<SEG>/...
 */
export type Family = 'lookup' | 'dev-or-v3'

export interface ParamSpec {
  name: string
  /** date: `YYYYMMDD`, eight digits. */
  format: 'text' | 'date'
  /** false: only the query string carries it (isBooked's idRequestBooking). */
  inPath: boolean
}

/** The response shape, which the fault injectors imitate or break. */
export type Shape =
  | { kind: 'keyed', key: string, driftKey: string }
  | { kind: 'array' }
  | { kind: 'object' }

export interface Operation {
  /** Recorded as RecordedRequest.operation. */
  name: string
  method: 'GET' | 'POST'
  family: Family
  /** Address segments after the prefix. */
  path: readonly string[]
  params: readonly ParamSpec[]
  auth: { apiKey: boolean, token: boolean }
  shape: Shape
  handle (ctx: OperationContext): Answer
}

const text = (name: string): ParamSpec => ({ name, format: 'text', inPath: true })
const date = (name: string): ParamSpec => ({ name, format: 'date', inPath: true })
const BOTH = { apiKey: true, token: true }

const blLists: Operation[] = ([
  ['noblbc23', 'bc23', 'Data BL BC23'],
  ['noblbc20', 'bc20', 'Data BL BC 2.0'],
  ['noblbc16', 'bc16', 'Data BL BC 1.6']
] as const).map(([name, type, key]) => ({
  name,
  method: 'GET',
  family: 'lookup',
  path: [name],
  params: [text('npwp')],
  auth: BOTH,
  shape: { kind: 'keyed', key, driftKey: 'data bl' },
  handle: blList(type, key)
}))

// 4.7 gives kontainerbc20's headers as open (4.10.4); it is held to the same
// two headers as its siblings.
const containerLists: Operation[] = CONTAINER_OPERATIONS.map((spec) => ({
  name: spec.name,
  method: 'GET',
  family: 'lookup',
  path: [spec.name],
  params: spec.params.map((name) => name === 'tglBl' ? date(name) : text(name)),
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
    family: 'lookup',
    path: ['BC20ByNoPib'],
    params: [text('npwp'), text('nopib')],
    auth: BOTH,
    shape: { kind: 'object' },
    handle: bc20ByNoPib
  },
  {
    // Only Authorization is listed for it (4.5).
    name: 'BC20ByNoBL',
    method: 'GET',
    family: 'lookup',
    path: ['BC20ByNoBL'],
    params: [text('nobl')],
    auth: { apiKey: false, token: true },
    shape: { kind: 'array' },
    handle: bc20ByNoBl
  },
  {
    name: 'document_sp2_container/cargo_owner',
    method: 'GET',
    family: 'dev-or-v3',
    path: ['document_sp2_container', 'cargo_owner'],
    params: [date('bl_date'), text('container_no'), text('npwp_cargo_owner'), text('bl_no')],
    auth: BOTH,
    shape: { kind: 'array' },
    handle: cargoOwnerContainers
  },
  {
    name: 'document_sp2/host-to-host',
    method: 'GET',
    family: 'dev-or-v3',
    path: ['document_sp2', 'host-to-host'],
    params: [text('npwp_cargo_owner'), text('bl_no'), date('bl_date')],
    auth: BOTH,
    shape: { kind: 'array' },
    handle: hostToHost
  },
  {
    // Only Authorization is listed for it (4.2).
    name: 'document_sp2/final',
    method: 'POST',
    family: 'dev-or-v3',
    path: ['document_sp2', 'final'],
    params: [],
    auth: { apiKey: false, token: true },
    shape: { kind: 'object' },
    handle: finalize
  },
  {
    // Only the API key is listed for it (4.8); an Authorization header is ignored.
    name: 'DetilBooking',
    method: 'POST',
    family: 'dev-or-v3',
    path: ['DetilBooking'],
    params: [],
    auth: { apiKey: true, token: false },
    shape: { kind: 'object' },
    handle: postOffer
  },
  {
    name: 'DetilBooking/isBooked',
    method: 'POST',
    family: 'dev-or-v3',
    path: ['DetilBooking', 'isBooked'],
    params: [{ name: 'idRequestBooking', format: 'text', inPath: false }],
    auth: BOTH,
    shape: { kind: 'object' },
    handle: postBooked
  }
]
