/**
 * The tolerances of reading a hub answer, each a bit: what the hub sent
 * other than in its documented form, and the gateway read anyway. The
 * readers (fields.ts rules, the normalizer, the byte transcoder, the
 * reference path) set bits as they meet them; the hub client counts each in
 * `gateway_hub_drift_total{operation,kind}` and logs it once per operation
 * and kind (upstream/drift.ts), so that an operator sees what the hub
 * really sends.
 */
export const DRIFT = {
  /** A number sent as a string (`"12"`), read as the number. */
  numberString: 1,
  /** A 0/1 flag sent as a string (`"1"`), read as the flag. */
  flagString: 2,
  /**
   * A string the profile says means null (`"null"`, `""`), read as null (or as no value, on a field
   * that may not be null).
   */
  nullString: 4,
  /**
   * A date or date-time in another form than documented (a day without its time, `YYYYMMDD`), read
   * as what it says.
   */
  dateForm: 8,
  /**
   * The list under another member than the documented key, taken because it is the only array (or
   * as the profile says).
   */
  answerKey: 16,
  /** An error's text in another member than `message`. */
  errorField: 32,
  /** A 2xx answer reporting a failure, answered as the failure. */
  failure: 64,
  /** A value its field's schema refuses (no real day, no number), answered as null or left out. */
  invalidValue: 128
} as const

/** The metric's `kind` label of each bit, in bit order. */
export const DRIFT_KINDS: ReadonlyArray<readonly [number, string]> = [
  [DRIFT.numberString, 'number-string'],
  [DRIFT.flagString, 'flag-string'],
  [DRIFT.nullString, 'null-string'],
  [DRIFT.dateForm, 'date-form'],
  [DRIFT.answerKey, 'answer-key'],
  [DRIFT.errorField, 'error-field'],
  [DRIFT.failure, 'failure-2xx'],
  [DRIFT.invalidValue, 'invalid-value']
]

/**
 * Where readers note what they tolerated, and how tolerant they are (the profile's nullStrings and
 * dateAnswered).
 */
export interface Tolerance {
  /** Notes a tolerance (a DRIFT bit) of the answer being read. */
  note (bit: number): void
  /** Strings read as null; empty for the documented hub. */
  nullStrings: ReadonlySet<string>
  /**
   * true: the hub answers days with a time of day as the day alone, and the gateway answers no time
   * for them.
   */
  dayOnly: boolean
}

/** The documented hub: nothing noted beyond the bits, nothing read as null but null. */
export function documentedTolerance (note: (bit: number) => void = () => {}): Tolerance {
  return { note, nullStrings: new Set(), dayOnly: false }
}

/**
 * A converted value that is no value: the field is left out (a null string on a field that may not
 * be null, the time of a day sent alone).
 */
export const OMIT: unique symbol = Symbol('omit')
