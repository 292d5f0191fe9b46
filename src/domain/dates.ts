/**
 * Date conversions between the gateway dialect (ISO 8601) and the hub's
 * forms (docs/hub.md#dates-and-values): `YYYYMMDD`, `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`,
 * `YYYY-MM-DD HH:MM:SS.S`, and the day-month-name forms of an Oracle-backed
 * hub, `DD-MON-YY` and `DD-MON-YYYY` (`21-MAY-23`).
 */

/** `2024-03-01` to `20240301` (the caller's date was already validated). */
export function toCompactDate (isoDate: string): string {
  return isoDate.slice(0, 4) + isoDate.slice(5, 7) + isoDate.slice(8, 10)
}

/** A day or moment the hub wrote, read: its day `YYYY-MM-DD`, its time `HH:MM:SS[.S]` if any. */
export interface HubDate {
  day: string
  time: string | undefined
}

/** English month abbreviations, as Oracle's `MON` writes them. */
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
const MONTH_NAME = /^[A-Za-z]{3}$/

/**
 * The year of a two-digit `YY`: 00-49 are 2000-2049, 50-99 are 1950-1999
 * (Oracle's `RR` as it reads in this half-century). A fixed rule rather than
 * one sliding with today's date: the same text is the same day every year.
 */
export function centuryOf (yy: number): number {
  return yy < 50 ? 2000 + yy : 1900 + yy
}

/** The number written in `n` ASCII digits of `value` from `at`; -1 where one is not a digit. */
function digitsAt (value: string, at: number, n: number): number {
  let out = 0
  for (let i = at; i < at + n; i++) {
    const c = value.charCodeAt(i) - 48
    if (!(c >= 0 && c <= 9)) return -1
    out = out * 10 + c
  }
  return out
}

/** The two ASCII digits of `value` at `at` as a number; -1 where one is not a digit. */
function twoAt (value: string, at: number): number {
  const a = value.charCodeAt(at) - 48
  const b = value.charCodeAt(at + 1) - 48
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1
}

/** Whether `year`-`month`-`day` is a day of the calendar (a month 1-12, a day it has). */
export function isCalendarDay (year: number, month: number, day: number): boolean {
  if (year < 0 || month < 1 || month > 12 || day < 1) return false
  const short = month === 4 || month === 6 || month === 9 || month === 11
  if (month !== 2) return day <= (short ? 30 : 31)
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= (leap ? 29 : 28)
}

function pad2 (n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

/** Whether hours, minutes and seconds make a time of day (no leap second: 23:59:60 is refused). */
export function isTimeOfDay (hours: number, minutes: number, seconds: number): boolean {
  return hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && seconds >= 0 && seconds <= 59
}

/**
 * A date as the hub answers it, read strictly: `YYYY-MM-DD`, with a time
 * `HH:MM:SS` after a space (or a `T`) and a fraction of digits, `YYYYMMDD`,
 * `DD-MON-YY` or `DD-MON-YYYY` (month names in English, any letter case).
 * Undefined for anything else, and for a day the calendar has not (`2024-02-30`)
 * or a time no clock shows (`24:00:00`): what is read is what the OpenAPI
 * document's `date` and `date-time` formats accept.
 */
export function readHubDate (value: string): HubDate | undefined {
  const n = value.length
  if (n >= 10 && value.charCodeAt(4) === 45 && value.charCodeAt(7) === 45) {
    const century = twoAt(value, 0)
    const years = twoAt(value, 2)
    if (century < 0 || years < 0) return undefined
    if (!isCalendarDay(century * 100 + years, twoAt(value, 5), twoAt(value, 8))) return undefined
    if (n === 10) return { day: value, time: undefined }
    // A time after a space (or a T), `HH:MM:SS`, and a fraction of at least one digit.
    const separator = value.charCodeAt(10)
    if (n < 19 || (separator !== 32 && separator !== 84)) return undefined
    if (value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58) return undefined
    if (!isTimeOfDay(twoAt(value, 11), twoAt(value, 14), twoAt(value, 17))) return undefined
    if (n > 19 && (value.charCodeAt(19) !== 46 || n === 20 || digitsAt(value, 20, n - 20) < 0)) {
      return undefined
    }
    return { day: value.slice(0, 10), time: value.slice(11) }
  }
  if (n === 8) {
    const year = digitsAt(value, 0, 4)
    if (!isCalendarDay(year, digitsAt(value, 4, 2), digitsAt(value, 6, 2))) return undefined
    const day = `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`
    return { day, time: undefined }
  }
  if ((n === 9 || n === 11) && value.charCodeAt(2) === 45 && value.charCodeAt(6) === 45) {
    const name = value.slice(3, 6)
    const month = MONTH_NAME.test(name) ? MONTHS.indexOf(name.toUpperCase()) + 1 : 0
    const digits = digitsAt(value, 7, n - 7)
    const year = n === 9 ? (digits < 0 ? -1 : centuryOf(digits)) : digits
    if (!isCalendarDay(year, month, digitsAt(value, 0, 2))) return undefined
    const day = `${String(year).padStart(4, '0')}-${pad2(month)}-${value.slice(0, 2)}`
    return { day, time: undefined }
  }
  return undefined
}

/**
 * An upstream date-time in local time to ISO 8601 with the configured offset
 * (a day alone: its midnight). Values readHubDate does not read are returned
 * unchanged, for the probe and the docs; the readers of answers
 * (mapping/fields.ts) use readHubDate, which refuses them.
 */
export function toIsoDateTime (value: string, offset: string): string {
  const read = readHubDate(value)
  return read === undefined ? value : `${read.day}T${read.time ?? '00:00:00'}${offset}`
}

/** An upstream date (a form readHubDate reads) to `YYYY-MM-DD`; others unchanged, as above. */
export function toIsoDate (value: string): string {
  return readHubDate(value)?.day ?? value
}

/**
 * An ISO date-time with offset to the hub's local `YYYY-MM-DD HH:MM:SS`
 * (docs/reference/glossary.md#request-bodies), shifted into the configured offset.
 */
export function toUpstreamDateTime (isoDateTime: string | Date, offset: string): string {
  const instant = typeof isoDateTime === 'string' ? Date.parse(isoDateTime) : isoDateTime.getTime()
  const sign = offset.startsWith('-') ? -1 : 1
  const [hours, minutes] = offset.slice(1).split(':').map(Number)
  const local = new Date(instant + sign * ((hours ?? 0) * 60 + (minutes ?? 0)) * 60_000)
  return local.toISOString().slice(0, 19).replace('T', ' ')
}
