/**
 * Date conversions between the gateway dialect (ISO 8601) and the hub's four
 * formats (docs/hub.md#resources): `YYYYMMDD`, `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`
 * and `YYYY-MM-DD HH:MM:SS.S`.
 */

/** `2024-03-01` to `20240301` (the caller's date was already validated). */
export function toCompactDate (isoDate: string): string {
  return isoDate.slice(0, 4) + isoDate.slice(5, 7) + isoDate.slice(8, 10)
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const COMPACT = /^(\d{4})(\d{2})(\d{2})$/

/**
 * An upstream date-time in local time to ISO 8601 with the configured offset.
 * Values in none of the known formats are returned unchanged: the hub is
 * inconsistent, and losing its value would be worse than passing it on.
 */
export function toIsoDateTime (value: string, offset: string): string {
  // The usual `YYYY-MM-DD HH:MM:SS[.S]`, checked by its separators: no regular expression on the hot path.
  if (value.length >= 19 && value.charCodeAt(10) === 32 && value.charCodeAt(4) === 45 && value.charCodeAt(13) === 58 && value.charCodeAt(16) === 58 &&
    (value.length === 19 || value.charCodeAt(19) === 46)) {
    return `${value.slice(0, 10)}T${value.slice(11)}${offset}`
  }
  const m = DATE_TIME.exec(value)
  if (m !== null) return `${m[1]}T${m[2]}${offset}`
  if (DATE.test(value)) return `${value}T00:00:00${offset}`
  return value
}

/** An upstream date (`YYYY-MM-DD`, `YYYYMMDD` or a date-time) to `YYYY-MM-DD`. */
export function toIsoDate (value: string): string {
  if (value.length === 10 && value.charCodeAt(4) === 45 && value.charCodeAt(7) === 45) return value
  if (DATE.test(value)) return value
  const m = DATE_TIME.exec(value)
  if (m !== null && m[1] !== undefined) return m[1]
  const c = COMPACT.exec(value)
  if (c !== null) return `${c[1]}-${c[2]}-${c[3]}`
  return value
}

/**
 * An ISO date-time with offset to the hub's local `YYYY-MM-DD HH:MM:SS`
 * (docs/hub.md#offer-body), shifted into the configured offset.
 */
export function toUpstreamDateTime (isoDateTime: string | Date, offset: string): string {
  const instant = typeof isoDateTime === 'string' ? Date.parse(isoDateTime) : isoDateTime.getTime()
  const sign = offset.startsWith('-') ? -1 : 1
  const [hours, minutes] = offset.slice(1).split(':').map(Number)
  const local = new Date(instant + sign * ((hours ?? 0) * 60 + (minutes ?? 0)) * 60_000)
  return local.toISOString().slice(0, 19).replace('T', ' ')
}
