/**
 * Durations written the way people write them in configuration:
 * `1 minute`, `30 s`, `15m`, `2 hours`, `1 day`, or plain milliseconds (`500`).
 * One grammar for RATE_LIMIT_WINDOW and the clients file, so that both are
 * checked at start-up rather than at the first request.
 */
const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000
}

/** The grammar as a JSON Schema pattern (used by the TypeBox schemas). */
export const DURATION_PATTERN = `^[1-9][0-9]{0,8} ?(${Object.keys(UNITS).join('|')})?$`

const DURATION = new RegExp(DURATION_PATTERN)

/** Milliseconds of a duration, or undefined when the text is not one. */
export function parseDuration (text: string): number | undefined {
  const match = DURATION.exec(text.trim())
  if (match === null) return undefined
  const amount = Number.parseInt(text.trim(), 10)
  return amount * (UNITS[match[1] ?? 'ms'] ?? 1)
}
