import type { FieldSpec, ResourceSpec } from '../catalogue/resource-spec.ts'
import type { HubOperation } from '../catalogue/types.ts'

/**
 * What one hub answer shows, read without the gateway's decoder (which
 * would refuse or tolerate what the probe wants to see): where the data is,
 * the item fields the catalogue does not name, the forms of dates and
 * values, and the members of an error answer that carry text.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/**
 * Where the data was found: under a member, the answer itself (an array: `*`, or a record:
 * undefined).
 */
export interface Located {
  /**
   * The member holding the list, `*` for a bare array, undefined for a record answered as itself.
   */
  key: string | undefined
  items: Array<Record<string, Json>>
}

function isRecord (value: unknown): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function records (list: readonly Json[]): Array<Record<string, Json>> {
  return list.filter(isRecord)
}

/** A record carrying the fields that make it the documented shape (its identity). */
function isItem (value: Record<string, Json>, spec: ResourceSpec): boolean {
  const required = spec.required ?? []
  return required.length === 0
    ? spec.fields.some((f) => f.upstream in value)
    : required.every((name) => name in value)
}

/**
 * The data of a 2xx answer, whatever key it comes under: the configured key
 * when it holds an array, else the only array-valued member; a record (or
 * an array of records) for the operations that answer one. Undefined when
 * no data is there (a message, an error).
 */
export function locate (
  op: HubOperation,
  body: unknown,
  configuredKey: string | undefined
): Located | undefined {
  const spec = op.response.item
  if (op.response.type === 'record' || op.response.type === 'records') {
    if (isRecord(body) && isItem(body, spec)) return { key: undefined, items: [body] }
    // A record under the key the profile names (`{"data": {...}}`).
    const under = configuredKey === undefined || !isRecord(body) ? undefined : body[configuredKey]
    if (configuredKey !== '*' && isRecord(under) && isItem(under, spec)) {
      return { key: configuredKey, items: [under] }
    }
    // A list of records may come bare or under a key, as the lists do.
    if (op.response.type === 'record') return undefined
  }
  if (Array.isArray(body)) return { key: '*', items: records(body) }
  if (!isRecord(body)) return undefined
  if (configuredKey !== undefined && configuredKey !== '*' && Array.isArray(body[configuredKey])) {
    return { key: configuredKey, items: records(body[configuredKey]) }
  }
  const arrays = Object.entries(body).filter((entry): entry is [string, Json[]] =>
    Array.isArray(entry[1])
  )
  if (arrays.length !== 1) return undefined
  const [key, list] = arrays[0]!
  // The only list, under a key nobody named: data only if its items are records of the kind
  // asked for (a 200 reporting a failure may carry a list of errors, `errors: [{detail}]`).
  const items = records(list)
  if (items.length !== list.length || !items.every((item) => isItem(item, spec))) return undefined
  return { key, items }
}

/** Item fields the catalogue's spec does not name (top level of each item), sorted. */
export function extraFields (
  items: ReadonlyArray<Record<string, Json>>,
  spec: ResourceSpec
): string[] {
  const known = new Set(spec.fields.map((f) => f.upstream))
  const extra = new Set<string>()
  for (const item of items) {
    for (const name of Object.keys(item)) if (!known.has(name)) extra.add(name)
  }
  return [...extra].sort()
}

export type DateForm = 'YYYY-MM-DD HH:MM:SS.S' | 'YYYY-MM-DD' | 'YYYYMMDD'
  | 'DD-MON-YY' | 'DD-MON-YYYY' | 'other'

export function dateFormOf (value: string): DateForm {
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value)) return 'YYYY-MM-DD HH:MM:SS.S'
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'YYYY-MM-DD'
  if (/^\d{8}$/.test(value)) return 'YYYYMMDD'
  if (/^\d{2}-[A-Za-z]{3}-\d{2}$/.test(value)) return 'DD-MON-YY'
  if (/^\d{2}-[A-Za-z]{3}-\d{4}$/.test(value)) return 'DD-MON-YYYY'
  return 'other'
}

/** The forms of the days the hub sends with a time of day (`date-with-time` fields), as seen. */
export function dateForms (
  items: ReadonlyArray<Record<string, Json>>,
  spec: ResourceSpec
): DateForm[] {
  const fields = spec.fields.filter((f) => f.kind === 'date-with-time').map((f) => f.upstream)
  const forms = new Set<DateForm>()
  for (const item of items) {
    for (const name of fields) {
      const value = item[name]
      if (typeof value === 'string' && value !== '' && value !== 'null') {
        forms.add(dateFormOf(value))
      }
    }
  }
  return [...forms].sort()
}

export interface ValueForms {
  /** Numbers and flags (by the spec) sent as strings. */
  numbersAsStrings: number
  /** Values that are the string "null". */
  nullStrings: number
  /** Values that are the empty string. */
  emptyStrings: number
}

const NUMERIC = new Set<FieldSpec['kind']>(['integer', 'number', 'flag'])

export function valueForms (
  items: ReadonlyArray<Record<string, Json>>,
  spec: ResourceSpec
): ValueForms {
  const numeric = new Set(spec.fields.filter((f) => NUMERIC.has(f.kind)).map((f) => f.upstream))
  const forms: ValueForms = { numbersAsStrings: 0, nullStrings: 0, emptyStrings: 0 }
  for (const item of items) {
    for (const [name, value] of Object.entries(item)) {
      if (typeof value !== 'string') continue
      if (value === 'null') forms.nullStrings++
      else if (value === '') forms.emptyStrings++
      else if (numeric.has(name)) forms.numbersAsStrings++
    }
  }
  return forms
}

/** Members that say an answer's state or where it was asked, not what went wrong. */
const NOT_TEXT = new Set(['status', 'result', 'state', 'code', 'path', 'timestamp', 'success'])
/** The names error texts are usually under, tried first (the order errorFields are proposed in). */
const TEXT_NAMES = ['message', 'error', 'detail', 'description', 'error_description', 'msg', 'text']

/** A value that reads as words: not a date, a time, an address path or a number. */
function isText (value: string): boolean {
  return /\p{L}/u.test(value) && !/^\d{4}-\d{2}-\d{2}/.test(value) && !value.startsWith('/')
}

/**
 * The dotted paths of the members of an error answer that carry words: up
 * to three levels deep, a list by its first item (`errors.0.detail`); the
 * usual names first. A status word (`status`, `result`), a code, a time or
 * the address asked are no error text.
 */
export function errorShape (body: unknown): string[] {
  const paths: string[] = []
  const walk = (value: unknown, at: string, depth: number): void => {
    if (Array.isArray(value)) {
      if (value.length > 0) walk(value[0], `${at}.0`, depth + 1)
      return
    }
    if (!isRecord(value) || depth > 2) return
    for (const [name, inner] of Object.entries(value)) {
      const path = at === '' ? name : `${at}.${name}`
      if (typeof inner === 'string') {
        if (!NOT_TEXT.has(name.toLowerCase()) && isText(inner)) paths.push(path)
      } else walk(inner, path, depth + 1)
    }
  }
  if (isRecord(body)) walk(body, '', 0)
  return byUsualName(paths)
}

/** Error members, the usual names first (a stable sort: otherwise in the order given). */
export function byUsualName (paths: readonly string[]): string[] {
  const rank = (path: string): number => {
    const at = TEXT_NAMES.indexOf(path.split('.').at(-1)!.toLowerCase())
    return at === -1 ? TEXT_NAMES.length : at
  }
  return paths.map((path, i) => ({ path, i }))
    .sort((a, b) => rank(a.path) - rank(b.path) || a.i - b.i)
    .map(p => p.path)
}

/** The value at a dotted path (a list's item by its index), when it is a string. */
export function textAt (body: unknown, path: string): string | undefined {
  let value: unknown = body
  for (const part of path.split('.')) {
    if (Array.isArray(value) && /^(0|[1-9]\d*)$/.test(part)) value = value[Number(part)]
    else if (isRecord(value) && Object.hasOwn(value, part)) value = value[part]
    else return undefined
  }
  return typeof value === 'string' ? value : undefined
}

/** The members an envelope says an answer's state in. */
export const STATUS_MEMBERS = ['status', 'result', 'state'] as const

/** A state member and the short text it held. */
export interface StateMember { field: string, value: string }

/**
 * The state members of an envelope: members beside the data's own member
 * (`{"status": "success", "data": [...]}`) holding a short text. Never from
 * inside the data: an answer that is the record itself (`dataKey`
 * undefined) or a bare list (`*`) has no envelope, and a record's own
 * `status` (a declaration's SPPB) says the record's state, not the answer's.
 */
export function envelopeStatus (body: unknown, dataKey: string | undefined): StateMember[] {
  if (dataKey === undefined || dataKey === '*') return []
  return stateMembers(body).filter(({ field }) => field !== dataKey)
}

/** The state members of an answer: the short texts under `status`, `result` or `state`. */
export function stateMembers (body: unknown): StateMember[] {
  if (!isRecord(body)) return []
  return STATUS_MEMBERS.flatMap(field => {
    const value = body[field]
    return typeof value === 'string' && value.length <= 64 ? [{ field, value }] : []
  })
}

/** A JSON value from text, or undefined. */
export function parseJson (text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}
