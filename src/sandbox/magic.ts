import { HTML_TYPE, JSON_TYPE, isSuccess, json, message, serialize } from './answer.ts'
import type { Answer } from './answer.ts'
import type { Shape } from './operations.ts'

// Faults on demand. A request misbehaves when any of its parameter values is
// a magic value naming a fault; see docs/sandbox.md for the table.

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
  { name: 'SHAPE', code: '907' }
] as const

export type FaultName = typeof FAULTS[number]['name']

const BY_NAME = new Map<string, FaultName>(FAULTS.map((f) => [f.name, f.name]))
const BY_CODE = new Map<string, FaultName>(FAULTS.map((f) => [f.code, f.name]))

// The forms fit the parameters a caller can steer: free text (BL, PIB and
// booking numbers), NPWPs, SP2 UUIDs and YYYYMMDD dates (for the lookups that
// take only tglBl). The date form is a real date in the years 1900-1999
// (a gateway may refuse implausible years): `19`, the code's first two
// digits, January, and the day `1` + its last digit (503: 1950-01-13).
const TEXT_FORM = /^SBX-([A-Z0-9]+)$/i
const NPWP_FORM = /^990000000000(\d{3})$/
const UUID_FORM = /^00000000-0000-4000-8000-000000000(\d{3})$/
const DATE_FORM = /^19(\d{2})011(\d)$/

/** The fault a single value names, if any. */
export function faultOf (value: string): FaultName | undefined {
  const text = TEXT_FORM.exec(value)
  if (text?.[1] !== undefined) return BY_NAME.get(text[1].toUpperCase())
  const date = DATE_FORM.exec(value)
  const code = NPWP_FORM.exec(value)?.[1] ?? UUID_FORM.exec(value)?.[1] ?? (date === null ? undefined : `${date[1]}${date[2]}`)
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

export interface FaultOutcome {
  answer: Answer
  /** Delay on top of the configured latency. */
  extraDelayMs: number
}

const html = (status: number, title: string, text: string): Answer => ({
  kind: 'raw',
  status,
  contentType: HTML_TYPE,
  text: `<!DOCTYPE html>\n<html>\n<head><title>${title}</title></head>\n<body>\n<center><h1>${title}</h1></center>\n<p>${text}</p>\n<hr><center>nginx</center>\n</body>\n</html>\n`
})

/** The normal shape with nothing in it. */
function emptyBody (shape: Shape): unknown {
  if (shape.kind === 'keyed') return { [shape.key]: [] }
  return shape.kind === 'array' ? [] : {}
}

/** The normal answer's text when it is a success, else the empty normal shape. */
function normalText (normal: Answer, shape: Shape): string {
  return isSuccess(normal) ? serialize(normal) : JSON.stringify(emptyBody(shape))
}

/** The normal payload moved under a key the caller does not expect. */
function drifted (normal: Answer, shape: Shape): unknown {
  const body = isSuccess(normal) ? normal.body : emptyBody(shape)
  if (shape.kind === 'keyed') {
    const list = typeof body === 'object' && body !== null ? Object.values(body)[0] : undefined
    return { [shape.driftKey]: Array.isArray(list) ? list : [] }
  }
  return { data: body }
}

/** What a fault does to a request whose normal answer is computed by normal(). */
export function applyFault (fault: FaultName, shape: Shape, normal: () => Answer, slowMs: number): FaultOutcome {
  const now = (answer: Answer): FaultOutcome => ({ answer, extraDelayMs: 0 })
  switch (fault) {
    case 'SLOW': return { answer: normal(), extraDelayMs: slowMs }
    case 'HANG': return now({ kind: 'hang' })
    case '500': return now(message(500, 'Internal Server Error'))
    case '503': return now(html(503, '503 Service Temporarily Unavailable', 'The server is temporarily unable to service your request.'))
    case '502': return now(html(502, '502 Bad Gateway', 'The upstream server returned an invalid response.'))
    case '504': return now(message(504, 'Gateway Timeout'))
    case '404': return now(message(404, 'Data tidak ditemukan'))
    case '401': return now(message(401, 'Token expired'))
    case '403': return now(message(403, 'Forbidden'))
    case '429': return now(message(429, 'Too Many Requests', { 'retry-after': '7' }))
    case '400': return now(message(400, 'Parameter tidak valid'))
    case '422': return now(message(422, 'Data tidak dapat diproses'))
    case 'MALFORMED': {
      // A strict prefix of a JSON object or array is never valid JSON.
      const text = normalText(normal(), shape)
      return now({ kind: 'raw', status: 200, contentType: JSON_TYPE, text: text.slice(0, Math.max(1, Math.floor(text.length / 2))) })
    }
    case 'HTML': return now(html(200, 'Portal Layanan', 'Sesi Anda telah berakhir. Silakan masuk kembali.'))
    case 'RESET': return now({ kind: 'reset' })
    case 'EMPTY': return now(json(200, emptyBody(shape)))
    case 'DRIFT': return now(json(200, drifted(normal(), shape)))
    case 'NOKEY': return now(json(200, { status: 'ok' }))
    case 'TRUNCATED': return now({ kind: 'truncated', status: 200, contentType: JSON_TYPE, text: normalText(normal(), shape) })
    case 'SHAPE': return now(json(200, shape.kind === 'keyed' ? { [shape.key]: 'Data tidak tersedia' } : 'Data tidak tersedia'))
  }
}
