import type { Ajv } from 'ajv'
import { isContainerNo, isNpwp } from '../domain/identifiers.ts'

/**
 * The formats of caller input, each with the rule a caller reads when a
 * value breaks it. A request schema names its format (`format: 'npwp'`); the
 * error handler words a failed format by the format's own rule, so the rule
 * and the check are written once, side by side.
 */
export interface FormatDefinition {
  /** The rule, completing "<field> must be …". */
  rule: string
  /** Absent for the standard formats, which ajv-formats checks. */
  validate?: (value: string) => boolean
}

/** Letters, digits and the separators a field allows, as a JSON Schema pattern and a check. */
function patterned (pattern: string, rule: string): FormatDefinition & { pattern: string } {
  const regex = new RegExp(pattern)
  return { pattern, rule, validate: value => regex.test(value) }
}

export const BL_NO = patterned('^[A-Za-z0-9][A-Za-z0-9./-]{0,34}$', '1 to 35 characters: letters, digits, and . / - (starting with a letter or digit)')
/**
 * A BL number where the hub takes its parameters in its path
 * (UPSTREAM_PARAM_PLACEMENT=path): no `/`, which, sent as %2F, would let a hub
 * or a proxy that decodes %2F read `A/../../X` as another address.
 */
export const BL_NO_SEGMENT = patterned('^[A-Za-z0-9][A-Za-z0-9.-]{0,34}$', '1 to 35 characters: letters, digits, . and - (starting with a letter or digit; no /, since the hub takes it as a path segment)')
export const PIB_NO = patterned('^[A-Za-z0-9][A-Za-z0-9-]{0,29}$', '1 to 30 characters: letters, digits and - (starting with a letter or digit)')
export const BOOKING_REQUEST_ID = patterned('^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$', '1 to 64 characters: letters, digits and . _ : - (starting with a letter or digit)')
/** The years a BL date may have: `0000-01-01` is a calendar date too, but no bill of lading's. */
export const BL_DATE_YEARS = { first: 1900, last: 2100 }
export const BL_DATE_PATTERN = '^(19[0-9]{2}|20[0-9]{2}|2100)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'
const BL_DATE = new RegExp(BL_DATE_PATTERN)

/** A real calendar date, `YYYY-MM-DD`, in BL_DATE_YEARS. */
export function isBlDate (value: string): boolean {
  if (!BL_DATE.test(value)) return false
  const [year, month, day] = value.split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

export const IDEMPOTENCY_KEY = patterned('^[\\x21-\\x7E]{1,255}$', '1 to 255 visible ASCII characters, e.g. a UUID')

export const FORMATS = {
  // The gateway's own formats.
  npwp: { rule: 'a taxpayer number of 15 or 16 digits (dots and dashes are allowed and ignored)', validate: isNpwp },
  iso6346: { rule: 'an ISO 6346 container number: 4 letters, 7 digits, with a valid check digit', validate: isContainerNo },
  'bl-no': BL_NO,
  'bl-no-segment': BL_NO_SEGMENT,
  'bl-date': { rule: `a real calendar date written YYYY-MM-DD, in the years ${BL_DATE_YEARS.first} to ${BL_DATE_YEARS.last}`, validate: isBlDate },
  'pib-no': PIB_NO,
  'booking-request-id': BOOKING_REQUEST_ID,
  'idempotency-key': IDEMPOTENCY_KEY,
  // Standard formats (ajv-formats).
  date: { rule: 'a real calendar date written YYYY-MM-DD' },
  'date-time': { rule: 'an ISO 8601 date-time with an offset, e.g. 2024-03-01T08:15:00+07:00' },
  uuid: { rule: 'a UUID' },
  uri: { rule: 'an absolute URI' }
} as const satisfies Record<string, FormatDefinition>

export type FormatName = keyof typeof FORMATS

/**
 * Whether `value` is a whole multiple of `step`, judged on the number's
 * decimal text (what the caller wrote, as JavaScript prints it back), not by
 * binary division: 0.29 / 0.01 is 28.999999999999996 in floating point, and
 * at a thousand million the error of the division exceeds any tolerance
 * ajv's `multipleOfPrecision` could take. Steps that are not a power of ten
 * are divided exactly as ajv would.
 */
export function isDecimalMultiple (value: number, step: number): boolean {
  if (!Number.isFinite(value)) return false
  const places = decimalPlaces(step)
  if (places === undefined || step !== Number(`1e-${places}`)) return Number.isInteger(value / step)
  const own = decimalPlaces(Math.abs(value))
  return own !== undefined && own <= places
}

/** Digits after the point in a non-negative number's shortest decimal text (`1e-7` has 7). */
function decimalPlaces (n: number): number | undefined {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(n))
  if (match === null) return undefined
  return Math.max(0, (match[2]?.length ?? 0) - Number(match[3] ?? 0))
}

/**
 * The ajv plugin of the request schemas: the gateway's formats, and
 * `multipleOf` judged on decimal text (see isDecimalMultiple). Also used by
 * the tests that validate the OpenAPI document's examples.
 */
export function requestFormats (ajv: Ajv): Ajv {
  for (const [name, format] of Object.entries(FORMATS) as Array<[string, FormatDefinition]>) {
    if (format.validate !== undefined) ajv.addFormat(name, { type: 'string', validate: format.validate })
  }
  ajv.removeKeyword('multipleOf')
  ajv.addKeyword({
    keyword: 'multipleOf',
    type: 'number',
    schemaType: 'number',
    errors: false,
    validate: (step: number, value: number) => isDecimalMultiple(value, step)
  })
  return ajv
}
