import type { Scope } from './scopes.ts'
import type { ResourceSpec } from './resource-spec.ts'

/**
 * The shape of a catalogue entry: one hub operation, what it takes and
 * answers, and the gateway route it backs. The entries themselves are in
 * operations.ts.
 */

/** Which configured address an operation lives under: `{hub_url}` (lookups) or `{base_url}` (SP2, booking). */
export type Service = 'hub' | 'base'

/**
 * Address prefix family: lookups live under one versioned prefix; booking
 * and SP2 have a production and a development prefix.
 */
export type Area = 'lookup' | 'sp2' | 'booking'

/** Gateway-side parameter kinds, each with one validation schema (schemas/params.ts) and one conversion on the way to the hub. */
export type ParamKind = 'npwp' | 'blNo' | 'blDate' | 'containerNo' | 'pibNo' | 'bookingRequestId' | 'sp2Id'

export interface OperationParam {
  /** Gateway name (query or path parameter of our route). */
  name: string
  /** The hub's name. */
  upstream: string
  kind: ParamKind
  /** Always sent in the query string, whatever the placement of the others (the booked notification's `?idRequestBooking=`). */
  alwaysQuery?: boolean
}

export type CredentialHeader = 'apiKey' | 'authorization'

export type ResponseShape =
  /** An object with one array under `key`. */
  | { type: 'keyed-list', key: string, item: ResourceSpec }
  /** A bare array. */
  | { type: 'list', item: ResourceSpec }
  /** One object. */
  | { type: 'record', item: ResourceSpec }
  /** One object or an array of them, answered as a list. */
  | { type: 'records', item: ResourceSpec }

/** A customs document type a route is named after: `bc20` in `/v1/customs/bc20/containers`, `BC 2.0` in its words. */
export interface DocumentType {
  code: string
  label: string
}

/** What every route backed by a hub operation declares. */
interface RouteSpecBase {
  /** Fastify's path, `:name` for a path parameter. */
  url: string
  scope: Scope
  /** The OpenAPI tag it is listed under. */
  tag: string
  summary: string
  description: string
}

/** A GET route answering one hub lookup (routes/lookup-route.ts). */
export interface LookupRouteSpec extends RouteSpecBase {
  method: 'GET'
  /** Parameters taken from the path; the others come from the query string. */
  pathParams?: readonly string[]
  /** Example values of this route's parameters, where the kind's own example finds nothing (a seeded sandbox value). */
  examples?: Readonly<Record<string, string>>
}

/** A POST route making one hub write (routes/write-route.ts); its body schema and handler are the route file's. */
export interface WriteRouteSpec extends RouteSpecBase {
  method: 'POST'
  operationId: string
  /** The path parameter naming the document written to (audit lines, idempotency). */
  idParam: 'bookingRequestId' | 'sp2Id'
  /** What the 200 answer's `data` is. */
  answer: string
}

export type RouteSpec = LookupRouteSpec | WriteRouteSpec

/** One field of a request body the gateway sends, for the glossary. */
export interface RequestBodyField {
  upstream: string
  /** Where the value comes from on our side. */
  gateway: string
  conversion: string
  description: string
}

/**
 * What an operation is, for the routes and docs built from it: a BL list or
 * a container list of one customs document type (the taxpayer route merges
 * the BL lists), another lookup, or a write.
 */
export type OperationKind = 'bl-list' | 'container-list' | 'lookup' | 'write'

export interface HubOperation {
  /** The hub's name of the operation; the key of per-operation settings and of metric labels. */
  id: string
  kind: OperationKind
  title: string
  method: 'GET' | 'POST'
  service: Service
  area: Area
  /** Address after the area prefix, with its trailing slash. */
  path: string
  /** In the hub's order: in path placement, also the order of the path segments. */
  params: readonly OperationParam[]
  /**
   * Parameters a hub profile may add to this operation, for a hub that takes
   * more than the default reading (docs/hub.md#hub-profiles); the route then takes
   * them too. A write's may only be its route's path parameter.
   */
  alsoTakes?: readonly ParamKind[]
  headers: readonly CredentialHeader[]
  response: ResponseShape
  /** The route it backs. */
  route: RouteSpec
  /** The customs document type of a BL or container list. */
  documentType?: DocumentType
  /** The body a write sends, field by field (mapping/request-bodies.ts builds it; a test holds the two together). */
  requestBody?: { fields: readonly RequestBodyField[], note?: string }
  /** Why this entry looks the way it does, where the hub's documentation is odd or silent. */
  note?: string
}
