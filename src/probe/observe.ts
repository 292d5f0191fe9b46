import type { FieldSpec, ResourceSpec } from '../catalogue/resource-spec.ts'
import type { HubOperation } from '../catalogue/types.ts'

/**
 * What one hub answer shows, read without the gateway's decoder (which
 * would refuse or tolerate what the probe wants to see): where the data is,
 * the item fields the catalogue does not name, the forms of dates and
 * values, and the members of an error answer that carry text.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Where the data was found: under a member, the answer itself (an array: `*`, or a record: undefined). */
export interface Located {
  /** The member holding the list, `*` for a bare array, undefined for a record answered as itself. */
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
  return required.length === 0 ? spec.fields.some(f => f.upstream in value) : required.every(name => name in value)
}

/**
 * The data of a 2xx answer, whatever key it comes under: the configured key
 * when it holds an array, else the only array-valued member; a record (or
 * an array of records) for the operations that answer one. Undefined when
 * no data is there (a message, an error).
 */
export function locate (op: HubOperation, body: unknown, configuredKey: string | undefined): Located | undefined {
  const spec = op.response.item
  if (op.response.type === 'record' || op.response.type === 'records') {
    if (isRecord(body) && isItem(body, spec)) return { key: undefined, items: [body] }
    // A list of records may come bare or under a key, as the lists do.
    if (op.response.type === 'record') return undefined
  }
  if (Array.isArray(body)) return { key: '*', items: records(body) }
  if (!isRecord(body)) return undefined
  if (configuredKey !== undefined && configuredKey !== '*' && Array.isArray(body[configuredKey])) {
    return { key: configuredKey, items: records(body[configuredKey]) }
  }
  const arrays = Object.entries(body).filter((entry): entry is [string, Json[]] => Array.isArray(entry[1]))
  if (arrays.length !== 1) return undefined
  const [key, list] = arrays[0]!
  return { key, items: records(list) }
}

/** Item fields the catalogue's spec does not name (top level of each item), sorted. */
export function extraFields (items: ReadonlyArray<Record<string, Json>>, spec: ResourceSpec): string[] {
  const known = new Set(spec.fields.map(f => f.upstream))
  const extra = new Set<string>()
  for (const item of items) for (const name of Object.keys(item)) if (!known.has(name)) extra.add(name)
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
export function dateForms (items: ReadonlyArray<Record<string, Json>>, spec: ResourceSpec): DateForm[] {
  const fields = spec.fields.filter(f => f.kind === 'date-with-time').map(f => f.upstream)
  const forms = new Set<DateForm>()
  for (const item of items) {
    for (const name of fields) {
      const value = item[name]
      if (typeof value === 'string' && value !== '' && value !== 'null') forms.add(dateFormOf(value))
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

export function valueForms (items: ReadonlyArray<Record<string, Json>>, spec: ResourceSpec): ValueForms {
  const numeric = new Set(spec.fields.filter(f => NUMERIC.has(f.kind)).map(f => f.upstream))
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

/** The dotted paths of the string members of an error answer (two levels deep): where its text is. */
export function errorShape (body: unknown): string[] {
  if (!isRecord(body)) return []
  const paths: string[] = []
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string') paths.push(name)
    else if (isRecord(value)) for (const [inner, text] of Object.entries(value)) if (typeof text === 'string') paths.push(`${name}.${inner}`)
  }
  return paths
}

/** The value at a dotted path, when it is a string. */
export function textAt (body: unknown, path: string): string | undefined {
  let value: unknown = body
  for (const part of path.split('.')) {
    if (!isRecord(value)) return undefined
    value = value[part]
  }
  return typeof value === 'string' ? value : undefined
}

/** A member beside a list's data that reads as the answer's status (`status`, `result`, `state`): its name and value. */
export function statusMember (body: unknown, dataKey: string | undefined): { field: string, value: string } | undefined {
  if (!isRecord(body)) return undefined
  for (const field of ['status', 'result', 'state']) {
    const value = body[field]
    if (field !== dataKey && typeof value === 'string' && value.length <= 64) return { field, value }
  }
  return undefined
}

/** A JSON value from text, or undefined. */
export function parseJson (text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}
