import type { Config } from '../config/load.ts'
import { ConfigError } from '../config/load.ts'
import { gatewayError } from '../errors.ts'
import { toCompactDate } from '../domain/dates.ts'
import { normalizeNpwp } from '../domain/identifiers.ts'
import { compileNormalizer, type Normalizer } from '../mapping/normalize.ts'
import type { Transcoder } from '../mapping/transcode/index.ts'
import { transcoderOf } from './operation-transcoder.ts'
import { OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { Area, CredentialHeader, HubOperation, OperationParam, ParamKind, ResponseShape } from '../catalogue/types.ts'

/** An operation with the configuration applied and its normalizer compiled, once at start-up. */
export interface ResolvedOperation {
  id: OperationId
  method: 'GET' | 'POST'
  service: HubOperation['service']
  /** Path from the service root, e.g. `/V1/HUB/INT/AUTH/noblbc20/`. */
  address: string
  params: readonly OperationParam[]
  headers: readonly CredentialHeader[]
  response: ResponseShape
  /** The key the list is expected under (keyed-list only). */
  responseKey?: string
  dateFormat: 'YYYYMMDD' | 'YYYY-MM-DD'
  /** Per-operation undici timeouts; undefined: the pool's. */
  headersTimeout?: number
  bodyTimeout?: number
  /** Cache lifetime of a GET lookup. */
  cacheTtlSeconds: number
  /** The reference path: applied to the parsed answer when the transcoder gives up. */
  normalize: Normalizer
  /** The fast path: the hub's bytes to ours in one pass (mapping/transcode/). */
  transcode: Transcoder
}

export type OperationMap = ReadonlyMap<OperationId, ResolvedOperation>

/** interface.md 9. The production SP2 prefix is not shown; V3 is assumed, like booking. */
export function areaPrefix (area: Area, segment: string, env: Config['UPSTREAM_ENV']): string {
  if (area === 'lookup') return `/V1/${segment}/INT/AUTH/`
  return env === 'production' ? `/V3/${segment}/` : `/${segment}-DEV/`
}

export function resolveOperations (config: Config): OperationMap {
  const problems: string[] = []
  const known = new Set<string>(OPERATIONS.map(op => op.id))
  for (const id of Object.keys(config.UPSTREAM_OPERATIONS)) {
    if (!known.has(id)) problems.push(`UPSTREAM_OPERATIONS: unknown operation "${id}" (known: ${[...known].join(', ')})`)
  }
  const map = new Map<OperationId, ResolvedOperation>()
  for (const op of OPERATIONS as readonly HubOperation[]) {
    const override = config.UPSTREAM_OPERATIONS[op.id] ?? {}
    const paramNames = override.paramNames ?? {}
    for (const name of Object.keys(paramNames)) {
      if (!op.params.some(p => p.name === name)) problems.push(`UPSTREAM_OPERATIONS.${op.id}.paramNames: unknown parameter "${name}"`)
    }
    if (override.responseKey !== undefined && op.response.type !== 'keyed-list') {
      problems.push(`UPSTREAM_OPERATIONS.${op.id}.responseKey: this operation does not answer under a key`)
    }
    const responseKey = op.response.type === 'keyed-list' ? override.responseKey ?? op.response.key : undefined
    map.set(op.id as OperationId, {
      id: op.id as OperationId,
      method: op.method,
      service: op.service,
      address: areaPrefix(op.area, config.UPSTREAM_PATH_SEGMENT, config.UPSTREAM_ENV) + op.path,
      params: op.params.map(p => ({ ...p, upstream: paramNames[p.name] ?? p.upstream })),
      headers: override.headers ?? op.headers,
      response: op.response,
      ...(responseKey === undefined ? {} : { responseKey }),
      dateFormat: override.dateFormat ?? 'YYYYMMDD',
      ...(override.headersTimeoutMs === undefined ? {} : { headersTimeout: override.headersTimeoutMs }),
      ...(override.bodyTimeoutMs === undefined ? {} : { bodyTimeout: override.bodyTimeoutMs }),
      cacheTtlSeconds: op.method === 'GET' ? override.cacheTtlSeconds ?? config.CACHE_TTL_SECONDS : 0,
      normalize: compileNormalizer(op.response.item, { offset: config.UPSTREAM_TIMEZONE }),
      transcode: transcoderOf(op, responseKey, config.UPSTREAM_TIMEZONE)
    })
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return map
}

/** A validated gateway value in the form the hub expects. */
export function toUpstreamValue (kind: ParamKind, value: string, dateFormat: ResolvedOperation['dateFormat']): string {
  switch (kind) {
    case 'npwp': return normalizeNpwp(value)
    case 'blDate': return dateFormat === 'YYYYMMDD' ? toCompactDate(value) : value
    case 'containerNo': return value.toUpperCase()
    default: return value
  }
}

/** Values that must never become a path segment: a `/` or `\` in them, or a dot segment. */
const UNSAFE_SEGMENT = /[/\\]|^\.{1,2}$/

/**
 * The address of an operation without its values, as buildPath places them:
 * `{name}` for a path segment, the query left out. For traces, where the
 * address must not carry a taxpayer's number.
 */
export function addressTemplate (op: ResolvedOperation, placement: Config['UPSTREAM_PARAM_PLACEMENT'], basePath: string): string {
  const segments = placement === 'path' ? op.params.filter(param => param.alwaysQuery !== true).map(param => `{${param.upstream}}`) : []
  return basePath + op.address + segments.join('/')
}

/**
 * The path and query of one call. Parameters go in the query string, or as
 * path segments in the order interface.md lists them (4.10.1 leaves the
 * placement open); either way each value is encoded on its own. A value
 * that would be a path segment holding `/` or `\` (sent as %2F, which a hub
 * or a proxy before it may decode) or a dot segment is refused here too, in
 * case a route let one through: the route schemas refuse them first.
 */
export function buildPath (op: ResolvedOperation, values: Readonly<Record<string, string>>, placement: Config['UPSTREAM_PARAM_PLACEMENT'], basePath: string): string {
  let search = ''
  const segments: string[] = []
  for (const param of op.params) {
    const value = values[param.name]
    if (value === undefined) continue
    const upstream = toUpstreamValue(param.kind, value, op.dateFormat)
    if (placement === 'path' && param.alwaysQuery !== true) {
      if (UNSAFE_SEGMENT.test(upstream)) {
        const rule = 'must not hold / or \\ or be . or .. (it is sent to the hub as a path segment)'
        throw gatewayError('VALIDATION_FAILED', { details: [{ field: param.name, rule }] }, `${param.name} ${rule}`)
      }
      segments.push(encodeURIComponent(upstream))
    } else {
      search += `${search === '' ? '' : '&'}${formEncode(param.upstream)}=${formEncode(upstream)}`
    }
  }
  let path = basePath + op.address
  if (segments.length > 0) path += segments.join('/')
  return search === '' ? path : `${path}?${search}`
}

/** What needs no encoding in a query component: nearly every value the hub gets (NPWPs, BL numbers, dates). */
const FORM_SAFE = /^[A-Za-z0-9*._-]*$/
const FORM_ESCAPES: Record<string, string> = { '!': '%21', "'": '%27', '(': '%28', ')': '%29', '~': '%7E', '%20': '+' }

/**
 * A query component encoded as URLSearchParams encodes it
 * (application/x-www-form-urlencoded: a space as `+`, and `!'()~` escaped,
 * which encodeURIComponent leaves, and a lone surrogate as U+FFFD), the hub's query strings unchanged
 * byte for byte. Written out because URLSearchParams, an object per call,
 * was 3 % of a BL lookup's CPU; test/upstream-requests.test.ts holds it to
 * URLSearchParams over arbitrary strings.
 */
export function formEncode (value: string): string {
  return FORM_SAFE.test(value) ? value : encodeURIComponent(value.toWellFormed()).replace(/[!'()~]|%20/g, c => FORM_ESCAPES[c] ?? c)
}
