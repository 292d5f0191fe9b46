import type { Rng } from './prng.ts'

// ISO 6346 letter values: A=10 upwards, skipping multiples of 11.
const LETTER_VALUES = new Map<string, number>()
{
  let value = 10
  for (const letter of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') {
    if (value % 11 === 0) value++
    LETTER_VALUES.set(letter, value)
    value++
  }
}

/** Sum of weighted values modulo 11 for owner code + category + serial (10 characters). */
function remainder (first10: string): number | undefined {
  if (!/^[A-Z]{3}[UJZ]\d{6}$/.test(first10)) return undefined
  let sum = 0
  for (let i = 0; i < 10; i++) {
    const char = first10.charAt(i)
    const value = i < 4 ? LETTER_VALUES.get(char) : Number(char)
    if (value === undefined) return undefined
    sum += value * 2 ** i
  }
  return sum % 11
}

/** True for a well-formed container number whose check digit is right. */
export function isValidContainerNo (containerNo: string): boolean {
  if (!/^[A-Z]{4}\d{7}$/.test(containerNo)) return false
  const rest = remainder(containerNo.slice(0, 10))
  return rest !== undefined && rest % 10 === Number(containerNo.charAt(10))
}

/**
 * A container number of the given owner code (4 letters, the 4th being the
 * category U) with a correct check digit. Serials whose remainder is 10 are
 * skipped, as ISO 6346 recommends, so the check digit is never ambiguous.
 */
export function makeContainerNo (ownerCode: string, rng: Rng): string {
  for (;;) {
    const first10 = ownerCode + rng.digits(6)
    const rest = remainder(first10)
    if (rest === undefined) throw new Error(`bad owner code ${ownerCode}`)
    if (rest !== 10) return first10 + String(rest)
  }
}
