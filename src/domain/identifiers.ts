/** Domain rules for caller input (docs/api.md#routes). */

/** Strips the dots and dashes of a printed NPWP (`01.234.567.8-901.000`). */
export function normalizeNpwp (value: string): string {
  return value.replace(/[.-]/g, '')
}

export function isNpwp (value: string): boolean {
  return /^[0-9.-]+$/.test(value) && /^\d{15,16}$/.test(normalizeNpwp(value))
}

const LETTER_VALUES = (() => {
  // ISO 6346: A=10 and upwards, skipping multiples of 11 (11, 22, 33).
  const values = new Map<string, number>()
  let n = 10
  for (let code = 65; code <= 90; code++) {
    if (n % 11 === 0) n++
    values.set(String.fromCharCode(code), n++)
  }
  return values
})()

/** ISO 6346 check digit of the first ten characters (owner code, category, serial). */
export function iso6346CheckDigit (firstTen: string): number {
  let sum = 0
  for (let i = 0; i < 10; i++) {
    const ch = firstTen.charAt(i)
    const value = i < 4 ? LETTER_VALUES.get(ch) : Number(ch)
    if (value === undefined || Number.isNaN(value)) return -1
    sum += value * 2 ** i
  }
  return (sum % 11) % 10
}

/** Four letters, seven digits, and a valid check digit; case-insensitive. */
export function isContainerNo (value: string): boolean {
  const upper = value.toUpperCase()
  if (!/^[A-Z]{4}\d{7}$/.test(upper)) return false
  return iso6346CheckDigit(upper.slice(0, 10)) === Number(upper.charAt(10))
}
