import type { Ajv } from 'ajv'
import { isContainerNo, isNpwp } from '../domain/identifiers.ts'
import { EVENT_ID_PATTERN } from '../state/event-ids.ts'

/**
 * The formats of caller input, each with the rule a caller reads when a
 * value breaks it. A request schema names its format (`format: 'npwp'`); the
 * error handler words a failed format by the format's own rule, so the rule
 * and the check are written once, side by side. Every text input of a
 * request has a format of this table (validators.ts refuses to start
 * otherwise), and every one of them holds to the text rule below.
 */
export interface FormatDefinition {
  /** The rule, completing "<field> must be …". */
  rule: string
  /**
   * Absent for the standard formats, which ajv-formats checks (and which no request field uses).
   */
  validate?: (value: string) => boolean
}

/**
 * Characters no text input may hold, whatever its format: control
 * characters (C0, DEL and C1: tab and line breaks included), line and
 * paragraph separators, format characters (Unicode's category Cf: bidi
 * controls such as U+202E, zero-width characters, the BOM U+FEFF, soft
 * hyphens, tags) and unpaired surrogates (a JSON `"\ud800"`). None of
 * them belongs in an identifier or in a note the hub stores and shows: they
 * hide or reorder text on the hub's screens and in its logs, and end lines in
 * its files. A line break in a note is refused too: the note is one line.
 */
const REFUSED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

const REFUSED_KINDS: Array<[RegExp, string]> = [
  [/\p{Cc}/u, 'a control character'],
  [/\p{Cf}/u, 'a format character'],
  [/[\p{Zl}\p{Zp}]/u, 'a line or paragraph separator'],
  [/\p{Cs}/u, 'an unpaired surrogate']
]

/** What the text rule refuses, in words. */
export const REFUSED_CHARACTERS =
  'control characters (tab and line breaks included), line or paragraph separators, format ' +
  'characters (bidi controls such as U+202E, zero-width characters, the BOM U+FEFF) or unpaired ' +
  'surrogates'

/** `U+202E`, `U+E0041`. */
function codePointName (codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * The first character of `value` the text rule refuses: what it is, and where (1-based, in
 * characters).
 */
export function refusedCharacter (
  value: string
): { name: string; kind: string; at: number } | undefined {
  const match = REFUSED.exec(value)
  if (match === null) return undefined
  const character = match[0]
  const kind =
    REFUSED_KINDS.find(([pattern]) => pattern.test(character))?.[1] ?? 'a refused character'
  return {
    name: codePointName(character.codePointAt(0) ?? 0),
    kind,
    at: [...value.slice(0, match.index)].length + 1
  }
}

export function isText (value: string): boolean {
  return !REFUSED.test(value)
}

/** The text rule broken by `value`, naming its first refused character; undefined when it holds. */
export function textProblem (value: string): string | undefined {
  const found = refusedCharacter(value)
  return found === undefined
    ? undefined
    : `must not contain ${REFUSED_CHARACTERS}: found ${found.name} (${found.kind}) at character ` +
      `${found.at}`
}

/**
 * `text` with the refused characters written as escapes (`\u{202E}`), for echoing a name a caller
 * sent.
 */
export function printable (text: string): string {
  return text.replace(
    new RegExp(REFUSED.source, 'gu'),
    (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`
  )
}

/**
 * The rule a value breaks, in the words of what is wrong with it, where a
 * format can say more than its whole rule: a refused character (which, and
 * where), a blank or padded identifier. Undefined: the format's rule says it.
 */
export function formatProblem (format: string, value: string): string | undefined {
  const text = textProblem(value)
  if (text !== undefined) return text
  if (format === 'identifier') {
    if (value.trim() === '') return 'must not be blank'
    if (value.trim() !== value) return 'must not begin or end with whitespace'
  }
  if (format === 'date-time') {
    const written = /^(\d{4})-\d{2}-\d{2}[Tt]\d{2}:\d{2}:(\d{2})/.exec(value)
    if (written !== null && !inDateYears(Number(written[1]))) {
      return 'must be in the years ' +
      `${BL_DATE_YEARS.first} to ${BL_DATE_YEARS.last}`
    }
    if (written?.[2] === '60') return 'must not be a leap second: seconds are 00 to 59'
  }
  return undefined
}

/** An identifier: text (above), neither blank nor with whitespace around it. */
export function isIdentifier (value: string): boolean {
  return value !== '' && value.trim() === value && isText(value)
}

/** Letters, digits and the separators a field allows, as a JSON Schema pattern and a check. */
function patterned (pattern: string, rule: string): FormatDefinition & { pattern: string } {
  const regex = new RegExp(pattern)
  return { pattern, rule, validate: value => regex.test(value) }
}

export const BL_NO = patterned(
  '^[A-Za-z0-9][A-Za-z0-9./-]{0,34}$',
  '1 to 35 characters: letters, digits, and . / - (starting with a letter or digit)'
)
/**
 * A BL number where the hub takes its parameters in its path
 * (a hub profile's path placeholders): no `/`, which, sent as %2F, would let a hub
 * or a proxy that decodes %2F read `A/../../X` as another address.
 */
export const BL_NO_SEGMENT = patterned(
  '^[A-Za-z0-9][A-Za-z0-9.-]{0,34}$',
  '1 to 35 characters: letters, digits, . and - (starting with a letter or digit; no /, since ' +
  'the hub takes it as a path segment)'
)
export const PIB_NO = patterned(
  '^[A-Za-z0-9][A-Za-z0-9-]{0,29}$',
  '1 to 30 characters: letters, digits and - (starting with a letter or digit)'
)
export const BOOKING_REQUEST_ID = patterned(
  '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$',
  '1 to 64 characters: letters, digits and . _ : - (starting with a letter or digit)'
)
/** The years a BL date may have: `0000-01-01` is a calendar date too, but no bill of lading's. */
export const BL_DATE_YEARS = { first: 1900, last: 2100 }
export const BL_DATE_PATTERN =
  '^(19[0-9]{2}|20[0-9]{2}|2100)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$'
const BL_DATE = new RegExp(BL_DATE_PATTERN)

/** A real calendar date, `YYYY-MM-DD`, in BL_DATE_YEARS. */
export function isBlDate (value: string): boolean {
  if (!BL_DATE.test(value)) return false
  const [year, month, day] = value.split('-').map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/**
 * An ISO 8601 date-time with an offset (RFC 3339: `T` or `t`, `Z` or
 * `±HH:MM`, at most nine decimals of a second), a real calendar date and
 * time, in BL_DATE_YEARS. No leap second (`23:59:60`): the hub's clock and
 * JavaScript's have none, and no offer is made in one. A year outside the
 * range is refused rather than sent: `0000-01-01` or `9999-12-31` is no
 * offer's time, and past 9999 the hub's local time would not even have four
 * digits. The route checks the hub's local time of it against the same years
 * (routes/bookings.ts), since that depends on the hub profile's timeZone.
 */
const DATE_TIME = new RegExp(
  '^(\\d{4}-\\d{2}-\\d{2})[Tt]([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?' +
  '(?:[Zz]|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$'
)

export function isDateTime (value: string): boolean {
  const match = DATE_TIME.exec(value)
  return match !== null && isBlDate(match[1] ?? '') && Number.isFinite(Date.parse(value))
}

/** Whether a year is in BL_DATE_YEARS (the hub's local year of a date-time, say). */
export function inDateYears (year: number): boolean {
  return Number.isInteger(year) && year >= BL_DATE_YEARS.first && year <= BL_DATE_YEARS.last
}

/** Where an events reader resumes from: an event id (state/event-ids.ts), or `now`. */
export const EVENT_POSITION = patterned(
  `^(now|${EVENT_ID_PATTERN.slice(1, -1)})$`,
  'an event id (<ms>-<seq>, e.g. 1709255700000-0) or now'
)

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

export const IDEMPOTENCY_KEY = patterned(
  '^[\\x21-\\x7E]{1,255}$',
  '1 to 255 visible ASCII characters, e.g. a UUID'
)

export const FORMATS = {
  // The gateway's own formats.
  npwp: {
    rule: 'a taxpayer number of 15 or 16 digits (dots and dashes are allowed and ignored)',
    validate: isNpwp
  },
  iso6346: {
    rule: 'an ISO 6346 container number: 4 letters, 7 digits, with a valid check digit',
    validate: isContainerNo
  },
  'bl-no': BL_NO,
  'bl-no-segment': BL_NO_SEGMENT,
  'bl-date': {
    rule: `a real calendar date written YYYY-MM-DD, in the years ${BL_DATE_YEARS.first} to ` +
      `${BL_DATE_YEARS.last}`,
    validate: isBlDate
  },
  'pib-no': PIB_NO,
  'booking-request-id': BOOKING_REQUEST_ID,
  'idempotency-key': IDEMPOTENCY_KEY,
  uuid: { rule: 'a UUID', validate: (value) => UUID.test(value) },
  identifier: {
    rule: `an identifier: text without ${REFUSED_CHARACTERS}, neither blank nor with spaces ` +
      'before or after it',
    validate: isIdentifier
  },
  text: { rule: `text without ${REFUSED_CHARACTERS}`, validate: isText },
  'event-position': EVENT_POSITION,
  // OpenAPI's format of a secret (shown masked, never logged: logging/request-serializer.ts); the
  // field's pattern says more.
  password: { rule: `a secret without ${REFUSED_CHARACTERS}`, validate: isText },
  // A standard format, held to the gateway's stricter rule in requests (answers are not validated).
  'date-time': {
    rule: 'an ISO 8601 date-time with an offset, e.g. 2024-03-01T08:15:00+07:00: a real date and ' +
      `time in the years ${BL_DATE_YEARS.first} to ${BL_DATE_YEARS.last}, seconds 00 to 59 (no ` +
      'leap second)',
    validate: isDateTime
  },
  // Standard formats (ajv-formats), of answers only.
  date: { rule: 'a real calendar date written YYYY-MM-DD' },
  uri: { rule: 'an absolute URI' }
} as const satisfies Record<string, FormatDefinition>

/**
 * The formats a text input of a request may have: the gateway's own, each holding to the text rule.
 */
export const REQUEST_FORMATS: ReadonlySet<string> = new Set(
  Object.entries(FORMATS)
    .filter(([, format]) => 'validate' in format)
    .map(([name]) => name)
)

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
    const check = format.validate
    // The text rule first, whatever else the format says (the patterned formats hold to it
    // already).
    if (check !== undefined) {
      ajv.addFormat(name, { type: 'string', validate: (value) => isText(value) && check(value) })
    }
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
