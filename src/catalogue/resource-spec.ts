/**
 * A resource spec describes one upstream record: for each upstream field, our
 * name, its kind and its meaning. From one spec come the TypeBox response
 * schema (schemas/resource-schemas.ts), the compiled normalizer and byte
 * transcoder (mapping/) and the published glossary (scripts/docs/glossary.ts).
 */
export type ScalarKind =
  | 'string' // a string
  | 'text' // a string, or a number passed on as a string (fields whose type docs/hub.md leaves open)
  | 'integer'
  | 'number'
  | 'flag' // 0/1 upstream, boolean here
  | 'date' // YYYY-MM-DD here
  | 'datetime' // ISO 8601 with the configured offset here
  | 'date-with-time' // a day the hub sends with a time of day: the date under `name`, the date-time under `dateTimeName`
  | 'json' // element content docs/hub.md does not show: passed on, keys camelCased

export interface FieldSpec {
  upstream: string
  name: string
  kind: ScalarKind | ResourceSpec | { arrayOf: ResourceSpec | 'json' }
  nullable?: boolean
  /** Upstream empty string is answered as null (docs/hub.md#dates-and-values: gate_pass). */
  emptyAsNull?: boolean
  description: string
  /** A format of the OpenAPI document its string holds to (mapping/fields.ts checks it). */
  format?: 'uuid'
  /**
   * For a `date-with-time` field, our name of its date-time: `bl_date`
   * `2024-04-23 03:20:00.0` becomes `blDate` `2024-04-23` (the day in the
   * hub's calendar, the form the lookups take) and `blDateTime`
   * `2024-04-23T03:20:00.0+07:00`, so that nothing is lost and no caller cuts
   * the day out of a date-time in its own time zone.
   */
  dateTimeName?: string
  /**
   * The gateway fills this field from the request the hub accepted, when the
   * hub does not echo it (write answers), so it is always answered.
   */
  fromRequest?: boolean
}

export interface ResourceSpec {
  /** Name of the shared schema in OpenAPI `components.schemas`. */
  id: string
  title: string
  /** What it is in the hub's answers, citing docs/hub.md; the glossary shows it. */
  source: string
  fields: FieldSpec[]
  /**
   * Upstream fields the hub always sends: without one, or with a profile's
   * null string where the field may not be null, the record is not the
   * documented shape (UPSTREAM_BAD_RESPONSE). They are answered always (for
   * a date-with-time field its date; the date-time is left out where the hub
   * sends the day alone). Which fields: resources.ts says.
   */
  required?: string[]
}

/**
 * Our name of the member of a record that holds what the hub sent beyond the
 * record's spec (its keys camelCased), present only when it sent some: our
 * names stay a closed set, and a caller's misspelt field does not compile.
 */
export const HUB_EXTRA = 'hubExtra'

export function isResource (kind: FieldSpec['kind']): kind is ResourceSpec {
  return typeof kind === 'object' && 'fields' in kind
}

/** The names a field is answered under: one, or two for a `date-with-time` field. */
export function namesOf (field: FieldSpec): string[] {
  if (field.kind !== 'date-with-time') return [field.name]
  if (field.dateTimeName === undefined) throw new Error(`field ${field.upstream}: a date-with-time field needs its dateTimeName`)
  return [field.name, field.dateTimeName]
}

export function isArrayKind (kind: FieldSpec['kind']): kind is { arrayOf: ResourceSpec | 'json' } {
  return typeof kind === 'object' && 'arrayOf' in kind
}

/** Generic camelCase for upstream keys the specs do not name (`Data BL BC 2.0` -> `dataBlBc20`). */
export function camelCase (key: string): string {
  const words = key.split(/[^A-Za-z0-9]+/).filter(Boolean)
  let out = ''
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string
    const lowered = word === word.toUpperCase() ? word.toLowerCase() : word
    out += i === 0
      ? lowered.charAt(0).toLowerCase() + lowered.slice(1)
      : lowered.charAt(0).toUpperCase() + lowered.slice(1)
  }
  return out === '' ? key : out
}
