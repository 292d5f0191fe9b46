// Calendar helpers on `YYYY-MM-DD` strings, in UTC so the host zone never matters.

export function addDays (isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`)
  date.setUTCDate(date.getUTCDate() + days)
  return date.toISOString().slice(0, 10)
}

/** `YYYY-MM-DD` to the `YYYYMMDD` form of request parameters. */
export function compactDate (isoDate: string): string {
  return isoDate.replaceAll('-', '')
}

export function pad (value: number, width = 2): string {
  return String(value).padStart(width, '0')
}

/**
 * A time of day, `HH:MM:SS.0`, for the hub's stamped dates (BL lists and
 * declarations, docs/hub.md#dates-and-values), derived from `seed` by FNV-1a
 * rather than drawn from a generator, so that every other seeded value stays as it
 * was. Early-morning times occur: in UTC they fall on the day before.
 */
export function timeOfDay (seed: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < seed.length; i++) {
    h ^= seed.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  const minutes = (h >>> 0) % (24 * 60)
  return `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}:00.0`
}

/** A BL's date as the BL lists and declarations stamp it: `YYYY-MM-DD HH:MM:SS.S`. */
export function stampedBlDate (blNo: string, isoDate: string): string {
  return `${isoDate} ${timeOfDay(blNo)}`
}

/** A date parameter as sent, `YYYYMMDD` or `YYYY-MM-DD`, as `YYYY-MM-DD`; undefined when absent. */
export function day (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  return /^\d{8}$/.test(value) ? `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}` : value
}
