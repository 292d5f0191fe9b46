// Faults on demand: their names, and the magic values that name them. A
// request misbehaves when any of its parameter values is a magic value naming
// a fault (what each fault does: fault-answers.ts). `does` says it in words for
// people: docs/reference/sandbox.md is generated from this table.

/** A fault, its code and what it does, in words. */
function fault<const N extends string, const C extends string> (name: N, code: C, does: string) {
  return { name, code, does }
}

export const FAULTS = [
  fault('SLOW', '001', 'answers as it would have (a 400 or 404 too), after `slowMs` (3000 ms)'),
  fault('HANG', '002', 'never answers: the socket stays open until the client gives up or the ' +
    'sandbox closes'),
  fault('500', '500', '500 `{"message":"Internal Server Error"}`'),
  fault('503', '503', '503 with an nginx HTML page'),
  fault('502', '502', '502 with an nginx HTML page'),
  fault('504', '504', '504 `{"message":"Gateway Timeout"}`'),
  fault('404', '404', '404 `{"message":"Data tidak ditemukan"}`'),
  fault('401', '401', '401 `{"message":"Token expired"}`'),
  fault('403', '403', '403 `{"message":"Forbidden"}`'),
  fault('429', '429', '429 `{"message":"Too Many Requests"}` with `retry-after: 7`'),
  fault('400', '400', '400 `{"message":"Parameter tidak valid"}`'),
  fault('422', '422', '422 `{"message":"Data tidak dapat diproses"}`'),
  fault('MALFORMED', '900', '200 JSON that is the first half of the normal body: never valid JSON'),
  fault('HTML', '901', '200 with an HTML page (a portal\'s "session ended")'),
  fault('RESET', '902', 'drops the connection (TCP reset) without an answer'),
  fault('EMPTY', '903', '200, the normal shape with nothing in it: `{"<key>": []}`, `[]`, ' +
    'or `{}` for a record'),
  fault('DRIFT', '904', '200, the normal items under another key and no other: `{"data bl": ' +
    '[...]}`, `{"data kontainer": [...]}`, `{"data": ...}`'),
  fault('NOKEY', '905', '200 `{"status":"ok"}`: no list anywhere'),
  fault('TRUNCATED', '906', '200 with the `content-length` of the normal body, half of it sent, ' +
    'then the connection ended'),
  fault('SHAPE', '907', '200 with JSON of the wrong type: `"Data tidak tersedia"` where the list ' +
    'or record should be'),
  fault('FAILNOTFOUND', '908', '200 `{"status":"Data tidak ditemukan"}`: a status that is no ' +
    'success, and no data (stands for 404)'),
  fault('FAILREJECTED', '909', '200 `{"status":"failed","message":"Permintaan tidak dapat ' +
    'diproses"}` (stands for 422)'),
  fault('FAILNODATA', '910', '200 `{"message":"Data tidak ditemukan"}`: an error text, no data ' +
    'and no status (stands for 404)'),
  fault('FAILAUTH', '911', '200 `{"status":"failed","message":"API key is not valid or is ' +
    'expired / revoked."}` (stands for 403)'),
  fault('SNAKE', '912', 'answers as it would have, each record\'s own keys in snake_case ' +
    '(`idRequestBooking`: `id_request_booking`): put it in a free-text field, such as the ' +
    'booked `booking_note`')
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
  const code = NPWP_FORM.exec(value)?.[1] ?? UUID_FORM.exec(value)?.[1] ?? (date === null ? undefined : `${date[1]}${date[2]}`)
  return code === undefined ? undefined : BY_CODE.get(code)
}

export type MagicForm = 'text' | 'npwp' | 'uuid' | 'date'

/** Each form of a magic value and the parameters it fits, in words (docs/reference/sandbox.md). */
export const MAGIC_FORMS: ReadonlyArray<{ form: MagicForm, shape: string, fits: string }> = [
  {
    form: 'text',
    shape: '`SBX-` and the name, in any letter case',
    fits: 'BL, PIB and booking numbers, any free text'
  },
  { form: 'npwp', shape: '`990000000000` and the 3-digit code', fits: 'taxpayer numbers (NPWP)' },
  { form: 'uuid', shape: '`00000000-0000-4000-8000-000000000` and the code', fits: 'SP2 ids' },
  {
    form: 'date',
    shape: '`19`, the code\'s first two digits, `01`, `1` and its last digit: a real day of ' +
      '1900-1999, as `YYYYMMDD` or `YYYY-MM-DD`',
    fits: 'dates, for the lookups that take only a date'
  }
]

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
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) yield * stringsOf(item)
}

/** The first magic value among values, in order. */
export function detectFault (values: Iterable<string>): FaultName | undefined {
  for (const value of values) {
    const fault = faultOf(value)
    if (fault !== undefined) return fault
  }
  return undefined
}
