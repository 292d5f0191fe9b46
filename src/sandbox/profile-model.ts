import { isSuccess, json, message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { SandboxConfig } from './config.ts'
import type { ParamKind } from './context.ts'
import { DEFAULT_API_KEY_HEADER, DEFAULT_PATH_SEGMENT } from './constants.ts'
import type { ReportForm } from './fault-answers.ts'
import type { Headers, HubModel, Routed } from './hub-model.ts'
import { setMember } from './members.ts'
import { OPERATIONS } from './operations.ts'
import type { Area, Operation, ParamSpec, Shape } from './operations.ts'
import { hubNames, placeholders } from './profile-file.ts'
import type { DateAnswered, DateSent, HubProfile, ProfileFailure, ProfileOperation, ProfileSettings } from './profile-file.ts'
import { decodeSegments } from './router.ts'
import type { TokenBook } from './tokens.ts'

// The hub as a profile describes it (docs/hub.md#playing-a-profile). Strict
// where a real hub is: one prefix per area, each parameter where the profile
// puts it (a path segment in its order, or the query string), the API key
// under one of the names the profile gives, the token in its header with its
// scheme, dates in the form the profile sends. The answers take the profile's
// form: list key, dates, strings, a status member, and errors under its error
// fields.

/** Each area's prefix when the profile gives none: the documented development addresses. */
const AREA_PREFIX: Record<Area, string> = {
  lookup: `/V1/${DEFAULT_PATH_SEGMENT}/INT/AUTH`,
  sp2: `/${DEFAULT_PATH_SEGMENT}-DEV`,
  booking: `/${DEFAULT_PATH_SEGMENT}-DEV`
}

const DATE_FORMS: Record<DateSent, RegExp> = { YYYYMMDD: /^\d{8}$/, 'YYYY-MM-DD': /^\d{4}-\d{2}-\d{2}$/ }

/** A day with its time of day, as the BL lists and declarations stamp it. */
const STAMPED = /^(\d{4})-(\d{2})-(\d{2}) \d{2}:\d{2}:\d{2}\.\d$/

/** Month names as an Oracle-backed hub writes them in `DD-MON-YY` (its default date form). */
const MONTH_NAMES = 'JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC'.split(' ')

/** A stamped day (year, month, day) alone, in the form the profile's hub answers it. */
function dayAlone (form: DateAnswered, [year, month, day]: [string, string, string]): string {
  switch (form) {
    case 'YYYYMMDD': return `${year}${month}${day}`
    case 'DD-MON-YY': return `${day}-${MONTH_NAMES[Number(month) - 1]}-${year.slice(2)}`
    case 'DD-MON-YYYY': return `${day}-${MONTH_NAMES[Number(month) - 1]}-${year}`
    default: return `${year}-${month}-${day}`
  }
}

/** Errors a hub's front answers (credentials, its own failures), worded in its first error field; the others in its last. */
const HUB_LEVEL = new Set([401, 403, 500, 502, 503, 504])
const KEY_REFUSED = 'API key is not valid or is expired / revoked.'
const NOT_FOUND = 'Data tidak ditemukan'
const WENT_WRONG = 'Something went wrong. Please try again later.'

interface PlayedParam extends ParamSpec {
  /** Its place among the address's segments; undefined: the query string. */
  segment: number | undefined
}

/** One operation as the profile plays it. */
interface Played {
  operation: Operation
  /** The address's segments: a literal, or a parameter placeholder. */
  address: Array<string | PlayedParam>
  literals: number
  params: PlayedParam[]
  credentials: { apiKey: boolean, token: boolean }
  /** Lower-cased. */
  apiKeyHeaders: string[]
  tokenHeader: string
  /** A member the answer's data goes under; undefined: the sandbox's own form (`*` as well: its own key is the only array). */
  answerKey: string | undefined
  dateSent: DateSent
  dateAnswered: DateAnswered
  errorFields: string[]
  nullString: string | undefined
  failure: ProfileFailure | undefined
  /** A list that finds nothing is answered 404 (profile `notFound: "404"`), not empty. */
  emptyIs404: boolean
  shape: Shape
  report: ReportForm
}

function segmentsOf (path: string): string[] {
  const parts = path.split('/')
  while (parts.length > 0 && parts.at(-1) === '') parts.pop()
  return parts
}

function isList (operation: Operation): boolean {
  return operation.shape.kind !== 'object'
}

function playedShape (operation: Operation, answerKey: string | undefined): Shape {
  if (answerKey === undefined) return operation.shape
  if (operation.shape.kind === 'object') return { kind: 'wrapped', key: answerKey }
  return { kind: 'keyed', key: answerKey, driftKey: operation.shape.kind === 'keyed' ? operation.shape.driftKey : 'data' }
}

function play (operation: Operation, profile: HubProfile): Played {
  const entry: ProfileOperation = profile.operations?.[operation.name] ?? {}
  const defaults: ProfileSettings = profile.defaults ?? {}
  const setting = <K extends keyof ProfileSettings>(key: K, forLists = false): ProfileSettings[K] =>
    entry[key] ?? (forLists && !isList(operation) ? undefined : defaults[key])
  const prefix = segmentsOf(entry.prefix ?? profile.prefixes?.[operation.area] ?? AREA_PREFIX[operation.area]).slice(1)
  const path = entry.path ?? operation.path.join('/')
  const slots = placeholders(path).names
  const formatOf = (kind: ParamKind): ParamSpec['format'] => kind === 'blDate' ? 'date' : 'text'
  const params: PlayedParam[] = [...hubNames(operation, entry)].map(([kind, name]) => {
    const slot = slots.indexOf(name)
    return { name, kind, format: formatOf(kind), inPath: slot >= 0, segment: undefined }
  })
  const address = [...prefix, ...segmentsOf(path).map((part): string | PlayedParam => {
    const name = /^\{(.+)\}$/.exec(part)?.[1]
    const param = params.find((p) => p.name === name)
    return param ?? part
  })]
  for (const param of params) {
    const at = address.indexOf(param)
    param.segment = at >= 0 ? at : undefined
  }
  const credentials = setting('credentials')
  const keyHeaders = setting('apiKeyHeader') ?? DEFAULT_API_KEY_HEADER
  const answerKey = setting('answerKey', true)
  const errorFields = setting('errorFields') ?? ['message']
  const failure = setting('failure')
  const nullString = setting('nullStrings')?.[0] ?? (profile.stringValues === true ? 'null' : undefined)
  const played: Played = {
    operation,
    address,
    literals: address.filter((part) => typeof part === 'string').length,
    params,
    credentials: credentials === undefined ? operation.auth : { apiKey: credentials.includes('apiKey'), token: credentials.includes('token') },
    apiKeyHeaders: (typeof keyHeaders === 'string' ? [keyHeaders] : keyHeaders).map((h) => h.toLowerCase()),
    tokenHeader: (setting('tokenHeader') ?? 'Authorization').toLowerCase(),
    answerKey: answerKey === '*' ? undefined : answerKey,
    dateSent: setting('dateSent') ?? 'YYYYMMDD',
    dateAnswered: setting('dateAnswered') ?? 'YYYY-MM-DD HH:MM:SS.S',
    errorFields,
    nullString,
    failure,
    emptyIs404: isList(operation) && setting('notFound', true) === '404',
    shape: playedShape(operation, answerKey === '*' ? undefined : answerKey),
    report: {
      status: failure?.statusField ?? 'status',
      text: errorFields.at(-1) ?? 'message',
      authText: errorFields[0] ?? 'message',
      ...(failure?.statusCodeField === undefined ? {} : { code: failure.statusCodeField }),
      strings: profile.stringValues === true
    }
  }
  return played
}

/** Whether an answer in the sandbox's own form (before the profile's) is an empty list. */
function isEmptyList (operation: Operation, body: unknown): boolean {
  const data = operation.shape.kind === 'keyed' && typeof body === 'object' && body !== null
    ? Object.values(body)[0]
    : body
  return Array.isArray(data) && data.length === 0
}

/** The token as the hub takes it: a static one verbatim, one it issued after the scheme (or alone, without one). */
function tokenAccepted (header: string | string[] | undefined, scheme: string, tokens: TokenBook): boolean {
  if (typeof header !== 'string') return false
  if (tokens.staticTokens.has(header)) return true
  const space = header.indexOf(' ')
  if (scheme === '') return space < 0 && tokens.accepts(header)
  if (space < 0 || header.slice(0, space).toLowerCase() !== scheme.toLowerCase()) return false
  const token = header.slice(space + 1)
  return !/\s/.test(token) && tokens.accepts(token)
}

/** Every value of a JSON value as the profile's hub writes it: days without their time, values as strings, null as its null string. */
function rewrite (value: unknown, played: Played, strings: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, played, strings))
  if (value === null) return played.nullString ?? null
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rewrite(item, played, strings)]))
  }
  if (typeof value === 'string') {
    const stamped = STAMPED.exec(value)
    if (stamped === null || played.dateAnswered === 'YYYY-MM-DD HH:MM:SS.S') return value
    return dayAlone(played.dateAnswered, [stamped[1]!, stamped[2]!, stamped[3]!])
  }
  return strings ? String(value) : value
}

/** The first value of `successValues` (the hub's word for success), capitalised as callers have seen it written (`Success.`). */
function successWord (failure: ProfileFailure): string {
  const word = failure.successValues?.at(-1) ?? 'success'
  return word.charAt(0).toUpperCase() + word.slice(1)
}

export function profileModel (profile: HubProfile, config: SandboxConfig): HubModel {
  const played = new Map(OPERATIONS.map((operation) => [operation, play(operation, profile)]))
  const all = [...played.values()]
  const scheme = profile.tokenScheme ?? 'Bearer'
  const strings = profile.stringValues === true
  const errorFields = profile.defaults?.errorFields ?? ['message']
  // Large answers (the benchmark's 500 SP2 documents) are rewritten once.
  const rewritten = new WeakMap<object, { body: unknown, text: string }>()
  const of = (operation: Operation): Played => played.get(operation) as Played

  const errorIn = (fields: readonly string[], answer: Answer): Answer => {
    if (answer.kind !== 'json' || answer.status < 400) return answer
    const body = answer.body
    if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'message') return answer
    const level = HUB_LEVEL.has(answer.status)
    const field = (level ? fields[0] : fields.at(-1)) ?? 'message'
    const text = answer.status === 500 ? WENT_WRONG : (body as { message: string }).message
    const out: Record<string, unknown> = {}
    setMember(out, field, text)
    return json(answer.status, out, answer.headers)
  }

  return {
    route (path, query) {
      const parts = decodeSegments(path)
      if (parts === undefined) return undefined
      let best: Played | undefined
      for (const one of all) {
        if (one.address.length !== parts.length) continue
        if (!one.address.every((part, i) => typeof part !== 'string' || part === parts[i])) continue
        if (best === undefined || one.literals > best.literals) best = one
      }
      if (best === undefined) return undefined
      const routed: Routed = { operation: best.operation, params: {}, values: {}, segments: [] }
      for (const param of best.params) {
        const value = param.segment === undefined ? query.get(param.name) ?? undefined : parts[param.segment]
        if (param.segment !== undefined && value !== undefined) routed.segments.push(value)
        if (value === undefined) continue
        routed.params[param.name] = value
        routed.values[param.kind] = value
      }
      return routed
    },
    authenticate (operation: Operation, headers: Headers) {
      const one = of(operation)
      if (one.credentials.apiKey && !one.apiKeyHeaders.some((name) => headers[name] === config.apiKey)) {
        return message(403, KEY_REFUSED)
      }
      if (one.credentials.token && !tokenAccepted(headers[one.tokenHeader], scheme, config.tokens)) {
        return message(401, 'Unauthorized')
      }
      return undefined
    },
    validate ({ operation, params }) {
      const one = of(operation)
      for (const param of one.params) {
        const value = params[param.name]
        if (value === undefined || value === '') return message(400, `Parameter ${param.name} wajib diisi`)
        if (param.format === 'date' && !DATE_FORMS[one.dateSent].test(value)) return message(400, `Parameter ${param.name} harus berformat ${one.dateSent}`)
      }
      return undefined
    },
    present (operation, answer) {
      if (!isSuccess(answer)) return answer
      const one = of(operation)
      const source = answer.body
      if (one.emptyIs404 && isEmptyList(operation, source)) return message(404, NOT_FOUND)
      const cached = typeof source === 'object' && source !== null ? rewritten.get(source) : undefined
      if (cached !== undefined) return { kind: 'json', status: answer.status, body: cached.body, text: cached.text }
      let body = rewrite(source, one, strings)
      if (one.answerKey !== undefined) {
        const data = operation.shape.kind === 'keyed' && typeof body === 'object' && body !== null ? Object.values(body)[0] : body
        body = { [one.answerKey]: data }
      }
      const status = one.failure?.statusField
      // A list answer says its status beside the list (never in its place).
      if (status !== undefined && one.failure !== undefined && one.shape.kind === 'keyed' && !((status.split('.')[0] ?? '') in (body as object))) {
        setMember(body as Record<string, unknown>, status, successWord(one.failure))
      }
      const out = { kind: 'json' as const, status: answer.status, body, text: JSON.stringify(body) }
      if (typeof source === 'object' && source !== null && answer.text !== undefined) rewritten.set(source, { body, text: out.text })
      return answer.headers === undefined ? out : { ...out, headers: answer.headers }
    },
    shape: (operation) => of(operation).shape,
    report: (operation) => of(operation).report,
    finish: (answer, operation) => errorIn(operation === undefined ? errorFields : of(operation).errorFields, answer)
  }
}
