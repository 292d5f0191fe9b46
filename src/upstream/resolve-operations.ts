import { OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { HubOperation, ParamKind, ResponseShape } from '../catalogue/types.ts'
import type { Config } from '../config/load.ts'
import { toCompactDate } from '../domain/dates.ts'
import { normalizeNpwp } from '../domain/identifiers.ts'
import { gatewayError } from '../errors.ts'
import type { Tolerance } from '../mapping/drift.ts'
import { compileNormalizer, type Normalizer } from '../mapping/normalize.ts'
import type { Transcoder } from '../mapping/transcode/index.ts'
import {
  resolveProfile,
  type DateSent,
  type OperationProfile,
  type ProfileInForce
} from '../profile/resolve.ts'
import type { ProfileFailure } from '../profile/schema.ts'
import { transcoderOf, type AnswerMode, type FastPathSpec } from './operation-transcoder.ts'

export type { AnswerMode } from './operation-transcoder.ts'

/** A parameter of an operation as the profile in force places it. */
export interface ResolvedParam {
  /** The gateway's name: the route's parameter. */
  name: string
  /** The hub's name: in the query string. */
  upstream: string
  kind: ParamKind
  /** Sent as a path segment (a placeholder of the profile's path). */
  inPath: boolean
}

/** A 2xx failure's recognition (profile `failure`), its rules compiled. */
export interface FailureRules {
  statusField: string | undefined
  successValues: ReadonlySet<string>
  statusCodeField: string | undefined
  messageWithoutData: boolean
  codes: ReadonlyArray<{ match: RegExp, code: NonNullable<ProfileFailure['otherwise']> }>
  otherwise: NonNullable<ProfileFailure['otherwise']>
}

/**
 * An operation as the profile in force calls and reads it, with its
 * normalizer and transcoder compiled: once at start-up.
 */
export interface ResolvedOperation {
  id: OperationId
  method: 'GET' | 'POST'
  service: HubOperation['service']
  /**
   * Path from the service root with `{hub name}` placeholders, e.g. `/V1/HUB/INT/AUTH/noblbc20/`:
   * the address without its values.
   */
  address: string
  /** In query-string order. */
  params: readonly ResolvedParam[]
  /**
   * The path, from the service root: literal text, or the index in `params` of a value placed
   * there.
   */
  pieces: ReadonlyArray<string | number>
  /**
   * Whether it sends the API key, under each of `apiKeyHeaders`, and the access token, under
   * `tokenHeader` (lower-cased).
   */
  sendsApiKey: boolean
  sendsToken: boolean
  apiKeyHeaders: readonly string[]
  tokenHeader: string
  response: ResponseShape
  /** Where the data is in a 2xx answer. */
  answer: AnswerMode
  /**
   * The catalogue's list key, to see drift from it; undefined for an answer that is not a keyed
   * list.
   */
  documentedKey: string | undefined
  dateFormat: DateSent
  /** The members of an error answer that carry its text, in order. */
  errorFields: readonly string[]
  /** How a 2xx answer reporting a failure is recognised; undefined: never. */
  failure: FailureRules | undefined
  /** A 404 is the hub's answer that the list has nothing (profile `notFound: "404"`). */
  emptyWhenNotFound: boolean
  /** Its undici timeouts (the profile's `timeouts`); undefined: the pool's. */
  headersTimeout?: number
  bodyTimeout?: number
  /** Cache lifetime of a GET lookup. */
  cacheTtlSeconds: number
  /**
   * The reference path: applied to the parsed answer when there is no fast path or it gives up. Its
   * tolerances are noted in `drift`.
   */
  normalize: Normalizer
  /**
   * What the reference path noted while reading the answer at hand (DRIFT bits); the decoder reads
   * and clears it.
   */
  drift: { bits: number }
  /**
   * The fast path: the hub's bytes to ours in one pass (mapping/transcode/); undefined where the
   * reference path reads every answer (null strings, 2xx failures, an answer shape it does not
   * read).
   */
  transcode: Transcoder | undefined
  /** What the fast path was compiled from, for the transcoding threads; undefined without one. */
  fastPath: FastPathSpec | undefined
}

export type OperationMap = ReadonlyMap<OperationId, ResolvedOperation>

/** `{name}` in a profile's path. */
const PLACEHOLDER = /^\{(.+)\}$/

function answerOf (key: string | undefined): AnswerMode {
  if (key === undefined) return { kind: 'bare' }
  return key === '*' ? { kind: 'only-array' } : { kind: 'key', key }
}

function failureRules (failure: ProfileFailure | undefined): FailureRules | undefined {
  if (failure === undefined) return undefined
  return {
    statusField: failure.statusField,
    successValues: new Set(
      (failure.successValues ?? ['success']).map((v) => v.trim().toLowerCase())
    ),
    statusCodeField: failure.statusCodeField,
    messageWithoutData: failure.messageWithoutData === true,
    codes: (failure.codes ?? []).map((rule) => ({
      match: new RegExp(rule.match, 'i'),
      code: rule.code
    })),
    otherwise: failure.otherwise ?? 'UPSTREAM_REJECTED'
  }
}

/** What buildPath needs of an operation. */
export type Placement = Pick<ResolvedOperation, 'params' | 'pieces' | 'dateFormat'>

/**
 * An operation's parameters and address pieces as `profile` places them (the probe tries variants
 * of a profile with it).
 */
export function placementOf (profile: OperationProfile): Placement {
  const placed = new Set(
    profile.path
      .split('/')
      .map((segment) => PLACEHOLDER.exec(segment)?.[1])
      .filter((name) => name !== undefined)
  )
  const params = profile.params.map((p) => ({
    name: p.name,
    upstream: p.upstream,
    kind: p.kind,
    inPath: placed.has(p.upstream)
  }))
  return { params, pieces: piecesOf(profile, params), dateFormat: profile.dateSent }
}

/**
 * The pieces of `prefix/path`: literal text between the placeholders, each placeholder the index of
 * its parameter.
 */
function piecesOf (
  profile: OperationProfile,
  params: readonly ResolvedParam[]
): Array<string | number> {
  const pieces: Array<string | number> = []
  let text = `${profile.prefix}/`
  profile.path.split('/').forEach((segment, i) => {
    if (i > 0) text += '/'
    const name = PLACEHOLDER.exec(segment)?.[1]
    if (name === undefined) {
      text += segment
      return
    }
    pieces.push(text)
    text = ''
    pieces.push(params.findIndex((p) => p.upstream === name))
  })
  if (text !== '') pieces.push(text)
  return pieces
}

function resolveOne (
  op: HubOperation,
  profile: OperationProfile,
  config: Config,
  timeZone: string
): ResolvedOperation {
  const { params, pieces } = placementOf(profile)
  const answer = answerOf(profile.answerKey)
  const drift = { bits: 0 }
  const tolerance: Tolerance = {
    note: (bit) => { drift.bits |= bit },
    nullStrings: new Set(profile.nullStrings),
    dayOnly: profile.dateAnswered !== 'YYYY-MM-DD HH:MM:SS.S'
  }
  const failure = failureRules(profile.failure)
  // The fast path reads the documented forms; null strings and 2xx failures are the reference
  // path's.
  const fastPath =
    profile.nullStrings.length === 0 && failure === undefined
      ? { answer, dayOnly: tolerance.dayOnly }
      : undefined
  const transcode = fastPath === undefined ? undefined : transcoderOf(op, fastPath, timeZone)
  return {
    id: op.id as OperationId,
    method: op.method,
    service: profile.service,
    address: `${profile.prefix}/${profile.path}`,
    params,
    pieces,
    sendsApiKey: profile.credentials.apiKey,
    sendsToken: profile.credentials.token,
    apiKeyHeaders: profile.apiKeyHeaders.map(name => name.toLowerCase()),
    tokenHeader: profile.tokenHeader.toLowerCase(),
    response: op.response,
    answer,
    documentedKey: op.response.type === 'keyed-list' ? op.response.key : undefined,
    dateFormat: profile.dateSent,
    errorFields: profile.errorFields,
    failure,
    emptyWhenNotFound: profile.notFound === '404',
    headersTimeout: profile.timeouts.headersMs,
    bodyTimeout: profile.timeouts.bodyMs,
    cacheTtlSeconds: op.method === 'GET' ? profile.cacheTtlSeconds ?? config.CACHE_TTL_SECONDS : 0,
    normalize: compileNormalizer(op.response.item, { offset: timeZone, tolerance }),
    drift,
    transcode,
    fastPath: transcode === undefined ? undefined : fastPath
  }
}

/**
 * Every operation of the catalogue as the profile in force (resolved from `config` when not given)
 * calls and reads it.
 */
export function resolveOperations (
  config: Config,
  profile: ProfileInForce = resolveProfile(config)
): OperationMap {
  return new Map(
    (OPERATIONS as readonly HubOperation[]).map((op) => [
      op.id as OperationId,
      resolveOne(op, profile.operations.get(op.id as OperationId)!, config, profile.timeZone)
    ])
  )
}

/** A validated gateway value in the form the hub expects. */
export function toUpstreamValue (kind: ParamKind, value: string, dateFormat: DateSent): string {
  switch (kind) {
    case 'npwp': return normalizeNpwp(value)
    case 'blDate': return dateFormat === 'YYYYMMDD' ? toCompactDate(value) : value
    case 'containerNo': return value.toUpperCase()
    default: return value
  }
}

/** Values that must never become a path segment: a `/` or `\` in them, or a dot segment. */
const UNSAFE_SEGMENT = /[/\\]|^\.{1,2}$/
const UNSAFE_RULE = 'must not hold / or \\ or be . or .. (it is sent to the hub as a path segment)'

/**
 * The path and query of one call: the profile's path with each placeholder's
 * value in its segment, then the other parameters in the query string under
 * their hub names; each value encoded on its own. A value that would be a
 * path segment holding `/` or `\` (sent as %2F, which a hub or a proxy
 * before it may decode) or a dot segment is refused here too, in case a
 * route let one through: the route schemas refuse them first.
 */
export function buildPath (
  op: Placement,
  values: Readonly<Record<string, string>>,
  basePath: string
): string {
  const { params, pieces } = op
  let path = basePath
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!
    if (typeof piece === 'string') {
      path += piece
      continue
    }
    const param = params[piece]!
    const value = values[param.name]
    if (value === undefined) {
      throw gatewayError(
        'VALIDATION_FAILED',
        { details: [{ field: param.name, rule: 'is required' }] },
        `${param.name} is required`
      )
    }
    const upstream = toUpstreamValue(param.kind, value, op.dateFormat)
    if (UNSAFE_SEGMENT.test(upstream)) {
      throw gatewayError(
        'VALIDATION_FAILED',
        { details: [{ field: param.name, rule: UNSAFE_RULE }] },
        `${param.name} ${UNSAFE_RULE}`
      )
    }
    path += encodeURIComponent(upstream)
  }
  let search = ''
  for (let i = 0; i < params.length; i++) {
    const param = params[i]!
    if (param.inPath) continue
    const value = values[param.name]
    if (value === undefined) continue
    const sent = formEncode(toUpstreamValue(param.kind, value, op.dateFormat))
    search += `${search === '' ? '' : '&'}${formEncode(param.upstream)}=${sent}`
  }
  return search === '' ? path : `${path}?${search}`
}

/**
 * What needs no encoding in a query component: nearly every value the hub gets (NPWPs, BL numbers,
 * dates).
 */
const FORM_SAFE = /^[A-Za-z0-9*._-]*$/
const FORM_ESCAPES: Record<string, string> = {
  '!': '%21',
  "'": '%27',
  '(': '%28',
  ')': '%29',
  '~': '%7E',
  '%20': '+'
}

/**
 * A query component encoded as URLSearchParams encodes it (application/x-www-form-urlencoded: a
 * space as `+`, and `!'()~` escaped, which encodeURIComponent leaves, and a lone surrogate as
 * U+FFFD), the hub's query strings unchanged byte for byte. Written out because URLSearchParams,
 * an object per call, was 3 % of a BL lookup's CPU; test/upstream/upstream-requests.test.ts holds
 * it to URLSearchParams over arbitrary strings.
 */
export function formEncode (value: string): string {
  return FORM_SAFE.test(value)
    ? value
    : encodeURIComponent(value.toWellFormed()).replace(/[!'()~]|%20/g, (c) => FORM_ESCAPES[c] ?? c)
}
