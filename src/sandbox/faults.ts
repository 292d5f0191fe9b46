// Faults on demand: their names, and the magic values that name them. A
// request misbehaves when any of its parameter values is a magic value naming
// a fault (what each fault does: fault-answers.ts); see docs/sandbox.md for
// the table.

export const FAULTS = [
  { name: 'SLOW', code: '001' },
  { name: 'HANG', code: '002' },
  { name: '500', code: '500' },
  { name: '503', code: '503' },
  { name: '502', code: '502' },
  { name: '504', code: '504' },
  { name: '404', code: '404' },
  { name: '401', code: '401' },
  { name: '403', code: '403' },
  { name: '429', code: '429' },
  { name: '400', code: '400' },
  { name: '422', code: '422' },
  { name: 'MALFORMED', code: '900' },
  { name: 'HTML', code: '901' },
  { name: 'RESET', code: '902' },
  { name: 'EMPTY', code: '903' },
  { name: 'DRIFT', code: '904' },
  { name: 'NOKEY', code: '905' },
  { name: 'TRUNCATED', code: '906' },
  { name: 'SHAPE', code: '907' },
  { name: 'FAILNOTFOUND', code: '908' },
  { name: 'FAILREJECTED', code: '909' },
  { name: 'FAILNODATA', code: '910' },
  { name: 'FAILAUTH', code: '911' },
  { name: 'SNAKE', code: '912' }
] as const

export type FaultName = typeof FAULTS[number]['name']

const BY_NAME = new Map<string, FaultName>(FAULTS.map((f) => [f.name, f.name]))
const BY_CODE = new Map<string, FaultName>(FAULTS.map((f) => [f.code, f.name]))

// The forms fit the parameters a caller can steer: free text (BL, PIB and
// booking numbers), NPWPs, SP2 UUIDs and dates (for the lookups that take
// only tglBl). The date form is a real date in the years 1900-1999 (a
// gateway may refuse implausible years): `19`, the code's first two digits,
// January, and the day `1` + its last digit (503: 1950-01-13), sent as
// YYYYMMDD or, to a hub that takes it so, YYYY-MM-DD.
const TEXT_FORM = /^SBX-([A-Z0-9]+)$/i
const NPWP_FORM = /^990000000000(\d{3})$/
const UUID_FORM = /^00000000-0000-4000-8000-000000000(\d{3})$/
const DATE_FORM = /^19(\d{2})(?:011|-01-1)(\d)$/

/** The fault a single value names, if any. */
export function faultOf (value: string): FaultName | undefined {
  const text = TEXT_FORM.exec(value)
  if (text?.[1] !== undefined) return BY_NAME.get(text[1].toUpperCase())
  const date = DATE_FORM.exec(value)
  const code =
    NPWP_FORM.exec(value)?.[1] ??
    UUID_FORM.exec(value)?.[1] ??
    (date === null ? undefined : `${date[1]}${date[2]}`)
  return code === undefined ? undefined : BY_CODE.get(code)
}

export type MagicForm = 'text' | 'npwp' | 'uuid' | 'date'

/**
 * The magic value for a fault in one form: text `SBX-<NAME>` (BL, PIB and
 * booking numbers), npwp `990000000000<code>`, uuid
 * `00000000-0000-4000-8000-000000000<code>` (SP2 ids), date
 * `19<first two digits>011<last digit>` (YYYYMMDD parameters: 503 is `19500113`).
 */
export function magicValue (fault: FaultName, form: MagicForm = 'text'): string {
  const code = FAULTS.find((f) => f.name === fault)?.code ?? ''
  switch (form) {
    case 'text': return `SBX-${fault}`
    case 'npwp': return `990000000000${code}`
    case 'uuid': return `00000000-0000-4000-8000-000000000${code}`
    case 'date': return `19${code.slice(0, 2)}011${code.slice(2)}`
  }
}

/** Every string inside a JSON value, depth first. */
export function * stringsOf (value: unknown): Generator<string> {
  if (typeof value === 'string') yield value
  else if (Array.isArray(value)) for (const item of value) yield * stringsOf(item)
  else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) yield * stringsOf(item)
  }
}

/** The first magic value among values, in order. */
export function detectFault (values: Iterable<string>): FaultName | undefined {
  for (const value of values) {
    const fault = faultOf(value)
    if (fault !== undefined) return fault
  }
  return undefined
}
