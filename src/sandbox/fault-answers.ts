import { HTML_TYPE, JSON_TYPE, isSuccess, json, message, serialize } from './answer.ts'
import type { Answer } from './answer.ts'
import type { FaultName } from './faults.ts'
import { withMembers } from './members.ts'
import type { Shape } from './operations.ts'

// What each fault (faults.ts) does to a request's answer.

/**
 * Where a 200 answer that reports a failure puts what it says (dotted
 * member paths): by default `status` and `message`; a hub profile names
 * its own (its `failure.statusField`, `errorFields`, `failure.statusCodeField`).
 */
export interface ReportForm {
  status: string
  /** The text of an operation's failure. */
  text: string
  /** The text of a refused credential. */
  authText: string
  /** The failure's HTTP status, when the hub gives one. */
  code?: string
  /** The status as a string (a hub that stringifies every value). */
  strings?: boolean
}

/**
 * A 200 answer reporting a failure: its status (when it has one), its text (in `field`), and the
 * status it stands for.
 */
function reported (
  form: ReportForm,
  status: string | undefined,
  field: 'text' | 'authText' | undefined,
  text: string,
  code: number
): Answer {
  const entries: Array<readonly [string, unknown]> = []
  if (status !== undefined) entries.push([form.status, status])
  if (field !== undefined) entries.push([form[field], text])
  if (form.code !== undefined) {
    entries.push([form.code, form.strings === true ? String(code) : code])
  }
  return json(200, withMembers(entries))
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
  text:
    '<!DOCTYPE html>\n<html>\n' +
    `<head><title>${title}</title></head>\n` +
    `<body>\n<center><h1>${title}</h1></center>\n<p>${text}</p>\n` +
    '<hr><center>nginx</center>\n</body>\n</html>\n'
})

/** The normal shape with nothing in it. */
function emptyBody (shape: Shape): unknown {
  if (shape.kind === 'keyed') return { [shape.key]: [] }
  if (shape.kind === 'wrapped') return { [shape.key]: {} }
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
    const list =
      typeof body === 'object' && body !== null
        ? Object.values(body).find(Array.isArray)
        : undefined
    return { [shape.driftKey]: Array.isArray(list) ? list : [] }
  }
  if (shape.kind === 'wrapped') {
    return { data: typeof body === 'object' && body !== null ? Object.values(body)[0] : {} }
  }
  return { data: body }
}

/** `idRequestBooking` -> `id_request_booking`; a key already in snake_case stays as it is. */
function snakeCase (key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()
}

function snakeKeys (record: unknown): unknown {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return record
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [snakeCase(key), value]))
}

/**
 * The normal payload with each record's own keys in snake_case (a list's key, and what the records
 * hold, as they were).
 */
function snaked (body: unknown, shape: Shape): unknown {
  if (shape.kind === 'keyed' && typeof body === 'object' && body !== null) {
    return Object.fromEntries(
      Object.entries(body).map(([key, list]) => [
        key,
        Array.isArray(list) ? list.map(snakeKeys) : list
      ])
    )
  }
  if (shape.kind === 'wrapped' && typeof body === 'object' && body !== null) {
    return Object.fromEntries(Object.entries(body).map(([key, record]) => [key, snakeKeys(record)]))
  }
  return Array.isArray(body) ? body.map(snakeKeys) : snakeKeys(body)
}

/** What a fault does to a request whose normal answer is computed by normal(). */
export function applyFault (
  fault: FaultName,
  shape: Shape,
  normal: () => Answer,
  slowMs: number,
  form: ReportForm
): FaultOutcome {
  const now = (answer: Answer): FaultOutcome => ({ answer, extraDelayMs: 0 })
  switch (fault) {
    case 'SLOW':
      return { answer: normal(), extraDelayMs: slowMs }
    case 'HANG':
      return now({ kind: 'hang' })
    case '500':
      return now(message(500, 'Internal Server Error'))
    case '503':
      return now(
        html(
          503,
          '503 Service Temporarily Unavailable',
          'The server is temporarily unable to service your request.'
        )
      )
    case '502':
      return now(html(502, '502 Bad Gateway', 'The upstream server returned an invalid response.'))
    case '504':
      return now(message(504, 'Gateway Timeout'))
    case '404':
      return now(message(404, 'Data tidak ditemukan'))
    case '401':
      return now(message(401, 'Token expired'))
    case '403':
      return now(message(403, 'Forbidden'))
    case '429':
      return now(message(429, 'Too Many Requests', { 'retry-after': '7' }))
    case '400':
      return now(message(400, 'Parameter tidak valid'))
    case '422':
      return now(message(422, 'Data tidak dapat diproses'))
    case 'MALFORMED': {
      // A strict prefix of a JSON object or array is never valid JSON.
      const text = normalText(normal(), shape)
      return now({
        kind: 'raw',
        status: 200,
        contentType: JSON_TYPE,
        text: text.slice(0, Math.max(1, Math.floor(text.length / 2)))
      })
    }
    case 'HTML':
      return now(html(200, 'Portal Layanan', 'Sesi Anda telah berakhir. Silakan masuk kembali.'))
    case 'RESET':
      return now({ kind: 'reset' })
    case 'EMPTY':
      return now(json(200, emptyBody(shape)))
    case 'DRIFT':
      return now(json(200, drifted(normal(), shape)))
    case 'NOKEY':
      return now(json(200, { status: 'ok' }))
    case 'TRUNCATED':
      return now({
        kind: 'truncated',
        status: 200,
        contentType: JSON_TYPE,
        text: normalText(normal(), shape)
      })
    case 'SHAPE':
      return now(
        json(
          200,
          shape.kind === 'keyed' || shape.kind === 'wrapped'
            ? { [shape.key]: 'Data tidak tersedia' }
            : 'Data tidak tersedia'
        )
      )
    case 'SNAKE': {
      const answer = normal()
      return now(isSuccess(answer) ? json(200, snaked(answer.body, shape)) : answer)
    }
    case 'FAILNOTFOUND':
      return now(reported(form, 'Data tidak ditemukan', undefined, '', 404))
    case 'FAILREJECTED':
      return now(reported(form, 'failed', 'text', 'Permintaan tidak dapat diproses', 422))
    case 'FAILNODATA':
      return now(reported(form, undefined, 'text', 'Data tidak ditemukan', 404))
    case 'FAILAUTH':
      return now(
        reported(form, 'failed', 'authText', 'API key is not valid or is expired / revoked.', 403)
      )
  }
}
