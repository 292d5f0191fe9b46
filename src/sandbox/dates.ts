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
