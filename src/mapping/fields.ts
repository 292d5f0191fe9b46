import { readHubDate, type HubDate } from '../domain/dates.ts'
import {
  camelCase,
  namesOf,
  type FieldSpec,
  type ResourceSpec,
  type ScalarKind
} from '../catalogue/resource-spec.ts'
import { DRIFT, documentedTolerance, OMIT, type Tolerance } from './drift.ts'
import { ShapeError } from './shape-error.ts'

/**
 * Each kind of field, once: how the hub's value of a field becomes ours.
 * The normalizer (normalize.ts) applies these rules to parsed answers. The
 * byte transcoder (transcode/) applies them to every value its byte
 * shortcuts do not take, and asks them at compile time what null and the
 * empty string become; its shortcuts are held to these rules, byte for
 * byte, by test/mapping/transcode.test.ts.
 */

/** Where a rule notes what it tolerated (a DRIFT bit). */
type Note = Tolerance['note']

/**
 * One value of the hub's to ours (OMIT: no value, the field is left out); throws a ShapeError (path
 * '') for a value that does not fit.
 */
export type Convert = (value: unknown) => unknown

/**
 * A scalar field's rules: its value under its name and, for a date-with-time field, its date-time
 * under the second name.
 */
export interface FieldRules {
  convert: Convert
  second: Convert | undefined
}

const KEY_CACHE_LIMIT = 10_000
const keyCache = new Map<string, string>()

/** camelCase for unknown keys, memoized: the same few keys recur in every item. */
export function cachedCamelCase (key: string): string {
  let out = keyCache.get(key)
  if (out === undefined) {
    out = camelCase(key)
    if (keyCache.size < KEY_CACHE_LIMIT) keyCache.set(key, out)
  }
  return out
}

/** Unknown content (the `json` kind): kept, with keys camelCased all the way down. */
export function camelCaseDeep (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseDeep)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key in value) {
      out[cachedCamelCase(key)] = camelCaseDeep((value as Record<string, unknown>)[key])
    }
    return out
  }
  return value
}

/** `YYYY-MM-DD`: the documented form of a day. */
function isDay (v: string): boolean {
  return v.length === 10 && v.charCodeAt(4) === 45 && v.charCodeAt(7) === 45
}

/** `YYYY-MM-DD HH:MM:SS`, with or without a fraction: the documented form of a moment. */
function isMoment (v: string): boolean {
  return (
    v.length >= 19 && v.charCodeAt(10) === 32 && v.charCodeAt(4) === 45 && v.charCodeAt(13) === 58
  )
}

const DATE_FORMS = 'YYYY-MM-DD, YYYY-MM-DD HH:MM:SS[.S], YYYYMMDD, DD-MON-YY or DD-MON-YYYY'

/** A date string the hub wrote, read (domain/dates.ts); a ShapeError where it is no real day. */
function hubDate (v: unknown, what: string): HubDate {
  const read = typeof v === 'string' ? readHubDate(v) : undefined
  if (read === undefined) throw new ShapeError('', `${what}: a real day (and time), ${DATE_FORMS}`)
  return read
}

/**
 * The rule of one kind of scalar field; `offset` is the hub's UTC offset
 * (`+07:00`). A value in another form than documented that the rule still
 * reads (a number as a string, a day without its time) is noted in
 * `tolerance` (drift.ts); the usual forms are read without a note.
 */
export function kindRule (
  kind: ScalarKind,
  offset: string,
  tolerance: Tolerance = documentedTolerance()
): Convert {
  const { note } = tolerance
  switch (kind) {
    case 'string':
      return (v) => {
        if (typeof v === 'string') return v
        if (typeof v === 'number') return String(v)
        throw new ShapeError('', 'a string')
      }
    case 'text':
      return (v) => {
        if (typeof v === 'string' || typeof v === 'number') return String(v)
        throw new ShapeError('', 'a string')
      }
    case 'integer':
    case 'number':
      // Number text: a number, or a string holding one.
      return (v) => {
        const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v
        const finite = typeof n === 'number' && Number.isFinite(n)
        if (!finite || (kind === 'integer' && !Number.isInteger(n))) {
          throw new ShapeError('', `a${kind === 'integer' ? 'n integer' : ' number'}`)
        }
        // Noted only where read: a string that is no number is refused, not read.
        if (n !== v) note(DRIFT.numberString)
        return n
      }
    case 'flag':
      return (v) => {
        if (v === 1 || v === true) return true
        if (v === 0 || v === false) return false
        if (v === '1' || v === '0') {
          note(DRIFT.flagString)
          return v === '1'
        }
        throw new ShapeError('', 'a 0/1 flag')
      }
    case 'date':
    case 'date-with-time':
      return (v) => {
        const { day } = hubDate(v, kind === 'date' ? 'a date' : 'a date-time')
        if (kind === 'date' ? !isDay(v as string) : !isMoment(v as string)) note(DRIFT.dateForm)
        return day
      }
    case 'datetime':
      return (v) => {
        const { day, time } = hubDate(v, 'a date-time')
        if (!isMoment(v as string)) note(DRIFT.dateForm)
        return `${day}T${time ?? '00:00:00'}${offset}`
      }
    case 'json':
      return (v) => camelCaseDeep(v)
  }
}

/**
 * The date-time of a `date-with-time` field: where the hub sends the day
 * alone and the profile says it does (`dayOnly`), no time (OMIT) rather than
 * a midnight the hub never said; else its moment, or the day's midnight.
 */
function momentOfDay (offset: string, tolerance: Tolerance): Convert {
  const { dayOnly } = tolerance
  return (v) => {
    const { day, time } = hubDate(v, 'a date-time')
    if (time === undefined && dayOnly) return OMIT
    return `${day}T${time ?? '00:00:00'}${offset}`
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The check of each format a string field may name (FieldSpec.format), as OpenAPI's. */
const FORMATS: Record<NonNullable<FieldSpec['format']>, [RegExp, string]> = {
  uuid: [UUID, 'a UUID']
}

/** `convert`, its string held to the field's format (a ShapeError where it breaks it). */
function formatted (field: FieldSpec, convert: Convert): Convert {
  if (field.format === undefined) return convert
  const [pattern, words] = FORMATS[field.format]
  return (v) => {
    const out = convert(v)
    if (typeof out !== 'string' || !pattern.test(out)) throw new ShapeError('', words)
    return out
  }
}

/**
 * The one rule for a value its field's schema refuses (`convert` throws a
 * ShapeError): it is answered as no value, the nearest the schema allows:
 * null where the field may be null, left out (OMIT) where it may be absent,
 * noted as drift (DRIFT.invalidValue); where it can be neither (a required
 * field that may not be null: the record's identity, its numbers and
 * flags), the ShapeError stands and the answer is UPSTREAM_BAD_RESPONSE.
 */
function refusing (field: FieldSpec, required: boolean, convert: Convert, note: Note): Convert {
  if (required && field.nullable !== true) return convert
  const none = field.nullable === true ? null : OMIT
  return (v) => {
    try {
      return convert(v)
    } catch (error) {
      if (!(error instanceof ShapeError)) throw error
      note(DRIFT.invalidValue)
      return none
    }
  }
}

/**
 * Whether the hub's `value` is our null: null on a nullable field, and the
 * empty string where the spec says so (an empty `gate_pass`); an empty
 * string is null only on a nullable field.
 */
export function isNull (field: FieldSpec, value: unknown): boolean {
  return field.nullable === true && (value === null || (field.emptyAsNull === true && value === ''))
}

/**
 * `convert`, with the field's null (isNull) in front of it, and the
 * profile's null strings: null on a nullable field, no value (OMIT) on
 * another, noted as drift.
 */
export function orNull (
  field: FieldSpec,
  convert: Convert,
  tolerance: Tolerance = documentedTolerance()
): Convert {
  const { nullStrings, note } = tolerance
  const documented: Convert =
    field.nullable !== true ? convert : (v) => (isNull(field, v) ? null : convert(v))
  if (nullStrings.size === 0) return documented
  const nullValue = field.nullable === true ? null : OMIT
  return (v) => {
    if (typeof v === 'string' && nullStrings.has(v) && !isNull(field, v)) {
      note(DRIFT.nullString)
      return nullValue
    }
    return documented(v)
  }
}

/**
 * A scalar field's rules; undefined for a record or a list, whose structure
 * the normalizer and the transcoder walk themselves. A `date-with-time`
 * field (`bl_date` `2024-04-23 03:20:00.0`) is the pair: its day
 * (`2024-04-23`) under its name, its date-time
 * (`2024-04-23T03:20:00.0+07:00`) under its second name. `required`: the
 * record's spec requires the field (refusing says what that changes).
 */
export function fieldRules (
  field: FieldSpec, offset: string, tolerance: Tolerance = documentedTolerance(), required = false
): FieldRules | undefined {
  const { kind } = field
  if (typeof kind !== 'string') return undefined
  const silent = { ...tolerance, note: () => {} }
  const convert = formatted(field, kindRule(kind, offset, tolerance))
  // The date-time refuses the values the date refuses; noted once, there.
  const second = kind === 'date-with-time' ? momentOfDay(offset, tolerance) : undefined
  return {
    convert: orNull(field, refusing(field, required, convert, tolerance.note), tolerance),
    second: second && orNull(field, refusing(field, required, second, silent.note), silent)
  }
}

/**
 * The other spellings of a spec's fields, by the name an unknown key
 * camelCases to: each field's hub name camelCased (`id_request_booking`,
 * `IdRequestBooking` and `ID_REQUEST_BOOKING` all fold to `idRequestBooking`)
 * and our names of it (`bookingRequestId`). A hub that spells a field
 * another way gets it renamed like the field, rather than kept as an
 * unknown field beside ours: never two names for one thing. A fold two
 * fields share names neither, and is kept as an unknown field. The
 * normalizer renames them (normalize.ts); the transcoder leaves them to it
 * (transcode/plan.ts `names`).
 */
export function spellingsOf<F extends { upstream: string; name: string }> (
  spec: ResourceSpec,
  compiled: readonly F[]
): Map<string, F> {
  const found = new Map<string, F | null>()
  spec.fields.forEach((field, i) => {
    for (const spelling of new Set([cachedCamelCase(field.upstream), ...namesOf(field)])) {
      const other = found.get(spelling)
      found.set(spelling, other === undefined || other === compiled[i] ? compiled[i]! : null)
    }
  })
  return new Map([...found].filter((entry): entry is [string, F] => entry[1] !== null))
}
