import { connect } from 'node:net'
import Fastify from 'fastify'
import { test } from 'tap'
import {
  REQUEST_AJV_OPTIONS,
  requestValidatorFactory,
  unformattedText
} from '../../src/schemas/validators.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import type { RecordedRequest } from '../../src/sandbox/types.ts'
import { build } from '../helpers/helper.ts'

/**
 * No control character, format character (bidi controls, zero-width
 * characters, BOM) or unpaired surrogate reaches the hub from any text input
 * of any route: each is refused with 400 VALIDATION_FAILED naming the field
 * and the rule (schemas/formats.ts, the text rule). The routes and their
 * inputs are read from the gateway's own OpenAPI document, so that a route
 * or a field added later is covered without a line here.
 */

/** Characters (and short sequences) an outside run sent into every field, and more: 38 kinds. */
const HOSTILE: Array<{ kind: string, text: string }> = [
  { kind: 'NUL', text: '\u0000' },
  { kind: 'SOH', text: '\u0001' },
  { kind: 'BEL', text: '\u0007' },
  { kind: 'backspace', text: '\b' },
  { kind: 'TAB', text: '\t' },
  { kind: 'LF', text: '\n' },
  { kind: 'VT', text: '\u000b' },
  { kind: 'FF', text: '\f' },
  { kind: 'CR', text: '\r' },
  { kind: 'CR LF', text: '\r\n' },
  { kind: 'ESC', text: '\u001b' },
  { kind: 'an ANSI colour sequence', text: '\u001b[31m' },
  { kind: 'US', text: '\u001f' },
  { kind: 'DEL', text: '\u007f' },
  { kind: 'C1 PAD', text: '\u0080' },
  { kind: 'C1 NEL', text: '\u0085' },
  { kind: 'C1 CSI', text: '\u009b' },
  { kind: 'C1 APC', text: '\u009f' },
  { kind: 'line separator U+2028', text: '\u2028' },
  { kind: 'paragraph separator U+2029', text: '\u2029' },
  { kind: 'bidi embedding U+202A', text: '\u202a' },
  { kind: 'bidi override U+202E', text: '\u202e' },
  { kind: 'bidi isolate U+2066', text: '\u2066' },
  { kind: 'bidi isolate end U+2069', text: '\u2069' },
  { kind: 'left-to-right mark U+200E', text: '\u200e' },
  { kind: 'right-to-left mark U+200F', text: '\u200f' },
  { kind: 'Arabic letter mark U+061C', text: '\u061c' },
  { kind: 'zero-width space U+200B', text: '\u200b' },
  { kind: 'zero-width non-joiner U+200C', text: '\u200c' },
  { kind: 'zero-width joiner U+200D', text: '\u200d' },
  { kind: 'word joiner U+2060', text: '\u2060' },
  { kind: 'BOM U+FEFF', text: '\ufeff' },
  { kind: 'soft hyphen U+00AD', text: '\u00ad' },
  { kind: 'interlinear annotation U+FFF9', text: '\ufff9' },
  { kind: 'tag character U+E0041', text: '\u{E0041}' },
  { kind: 'lone high surrogate', text: '\ud800' },
  { kind: 'lone low surrogate', text: '\udc00' },
  { kind: 'surrogates in the wrong order', text: '\udc00\ud800' }
]

/** What an identifier may not be either (on top of HOSTILE). */
const NOT_IDENTIFIERS: Array<{ kind: string; value: string; rule: RegExp }> = [
  { kind: 'empty', value: '', rule: /must not be empty/ },
  { kind: 'spaces only', value: '   ', rule: /must not be blank/ },
  { kind: 'a space before', value: ' SO-1', rule: /must not begin or end with whitespace/ },
  { kind: 'a space after', value: 'SO-1 ', rule: /must not begin or end with whitespace/ },
  {
    kind: 'a no-break space after',
    value: 'SO-1\u00a0',
    rule: /must not begin or end with whitespace/
  },
  {
    kind: 'an ideographic space before',
    value: '\u3000SO-1',
    rule: /must not begin or end with whitespace/
  }
]

const REFUSED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

type Json = Record<string, any>

/** One text input of one route, and a request that is valid apart from it. */
interface Input {
  route: string
  method: string
  path: string
  in: 'path' | 'query' | 'header' | 'body'
  name: string
  format: string | undefined
  valid: string
}

interface Request {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

/**
 * A lone surrogate as the three bytes it would take in UTF-8 if it could (no valid UTF-8: what a
 * careless encoder writes).
 */
function wtf8 (unit: number): number[] {
  return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
}

const isLoneSurrogate = (c: string) =>
  c.length === 1 && c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdfff

/**
 * Percent-encoded as a client would (encodeURIComponent refuses a lone surrogate: its bytes
 * instead).
 */
function percentEncode (value: string): string {
  return [...value]
    .map((c) =>
      isLoneSurrogate(c)
        ? wtf8(c.charCodeAt(0))
          .map((b) => `%${b.toString(16).toUpperCase()}`)
          .join('')
        : encodeURIComponent(c)
    )
    .join('')
}

/** JSON with every character outside printable ASCII written as a `\u` escape. */
function escapedJson (value: unknown): string {
  return JSON.stringify(value).replace(
    /\\u(d[89ab][0-9a-f]{2}|d[c-f][0-9a-f]{2})|[^\x20-\x7e]/gi,
    (match) =>
      match.length > 1 ? match : `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}`
  )
}

/**
 * JSON with every character as itself: control characters raw (no valid JSON), lone surrogates as
 * their bytes (no UTF-8).
 */
function rawJson (value: unknown): Buffer {
  const short: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }
  const text = JSON.stringify(value)
    .replace(/\\u00([01][0-9a-f])/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\([bfnrt])/g, (_m, letter: string) => short[letter] ?? letter)
    .replace(/\\u(d[89a-f][0-9a-f]{2})/gi, (_m, hex: string) =>
      String.fromCharCode(parseInt(hex, 16))
    )
  return Buffer.concat(
    [...text].map((c) => (isLoneSurrogate(c) ? Buffer.from(wtf8(c.charCodeAt(0))) : Buffer.from(c)))
  )
}

/**
 * Every text input of every route of the document, with each route's valid request (its examples).
 */
function textInputs (doc: Json): {
  inputs: Input[]
  valid: Map<string, () => Request>
  build: (input: Input, value: string, form?: 'escaped' | 'raw') => Request
} {
  const inputs: Input[] = []
  const routes = new Map<
    string,
    { method: string; path: string; params: Json[]; body: Json | undefined }
  >()
  const exampleOf = (p: Json): string | undefined =>
    p.example ?? (p.name === 'idempotency-key' ? undefined : '')
  for (const [path, operations] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(operations as Json)) {
      const route = `${method.toUpperCase()} ${path}`
      const params = (op.parameters ?? []) as Json[]
      const body = op.requestBody?.content?.['application/json']?.schema as Json | undefined
      routes.set(route, { method: method.toUpperCase(), path, params, body })
      for (const p of params) {
        if (p.schema?.type === 'string') {
          inputs.push({
            route,
            method: method.toUpperCase(),
            path,
            in: p.in,
            name: p.name,
            format: p.schema.format,
            valid: exampleOf(p) ?? '6f0d5a43-2b7e-4c1e-9a55-3f1f1f2b9c0d'
          })
        }
      }
      for (const [name, property] of Object.entries((body?.properties ?? {}) as Json)) {
        if (property.type === 'string') {
          inputs.push({
            route,
            method: method.toUpperCase(),
            path,
            in: 'body',
            name,
            format: property.format,
            valid: property.examples?.[0]
          })
        }
      }
    }
  }
  const request = (
    route: string,
    override?: { input: Input; value: string; form: 'escaped' | 'raw' }
  ): Request => {
    const { method, path, params, body } = routes.get(route)!
    const overrides = (where: string, name: string) =>
      override !== undefined && override.input.in === where && override.input.name === name
    let url = path
    const query: string[] = []
    const headers: Record<string, string> = {}
    for (const p of params) {
      const value = overrides(p.in, p.name) ? override!.value : exampleOf(p)
      if (value === undefined) continue
      if (p.in === 'path') url = url.replace(`{${p.name}}`, percentEncode(value))
      if (p.in === 'query') query.push(`${p.name}=${percentEncode(value)}`)
      if (p.in === 'header') headers[p.name] = value
    }
    if (query.length > 0) url += `?${query.join('&')}`
    if (body === undefined) return { method, url, headers }
    const fields: Json = {}
    for (const [name, property] of Object.entries((body.properties ?? {}) as Json)) {
      if (overrides('body', name)) fields[name] = override!.value
      else if ((body.required ?? []).includes(name) || property.type !== 'string') {
        fields[name] = property.examples?.[0]
      }
    }
    return {
      method,
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: override?.form === 'raw' ? rawJson(fields) : escapedJson(fields)
    }
  }
  return {
    inputs,
    valid: new Map([...routes.keys()].map((route) => [route, () => request(route)])),
    build: (input, value, form = 'escaped') => request(input.route, { input, value, form })
  }
}

/**
 * Whether any string the hub received (address, query, headers, body) holds a refused character.
 */
function reachedTheHub (requests: readonly RecordedRequest[]): string[] {
  const found: string[] = []
  const visit = (value: unknown, where: string): void => {
    if (typeof value === 'string') {
      if (
        REFUSED.test(value) ||
        REFUSED.test(
          (() => {
            try {
              return decodeURIComponent(value)
            } catch {
              return value
            }
          })()
        )
      ) { found.push(where) }
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) visit(inner, `${where}.${key}`)
    }
  }
  requests.forEach((r, i) =>
    visit(
      { path: r.path, query: r.query, params: r.params, headers: r.headers, body: r.body },
      `request ${i}`
    )
  )
  return found
}

test('every text input of every route refuses 38 kinds of control, format and surrogate ' +
  'characters, escaped and raw, and sends nothing to the hub', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { CACHE_TTL_SECONDS: '0', RATE_LIMIT_MAX: '1000000' }
  })
  const { inputs, valid, build: hostile } = textInputs(app.swagger() as Json)
  const routes = new Set(inputs.map((i) => i.route))
  t.ok(routes.size >= 20, `${routes.size} routes take text`)
  t.ok(
    inputs.some((i) => i.in === 'body' && i.name === 'serviceOrderId') &&
      inputs.some((i) => i.in === 'body' && i.name === 'note') &&
      inputs.some((i) => i.in === 'header'),
    'body, path, query and header inputs are all in the table'
  )

  // Each route's valid request reaches the hub: the refusals below are the hostile value's doing.
  // (The event routes call no hub: a WebSocket, a stream with its ticket; their inputs are in the
  // table all the same.)
  const events = new Set(
    Object.entries(app.swagger().paths as Json).flatMap(([path, ops]) =>
      Object.entries(ops as Json)
        .filter(([, op]) => (op.tags ?? []).includes('events'))
        .map(([method]) => `${method.toUpperCase()} ${path}`)
    )
  )
  let expected = 0
  for (const [route, request] of valid) {
    if (!inputs.some((i) => i.route === route) || events.has(route)) continue
    const res = await app.inject(request())
    t.equal(
      res.statusCode,
      200,
      `${route}: the valid request is answered (${res.body.slice(0, 200)})`
    )
    expected++
  }
  t.ok(sandbox.count() >= expected, 'each valid request called the hub')
  sandbox.reset()

  let sent = 0
  for (const input of inputs) {
    const field = `${input.in}.${input.name}`
    for (const { kind, text } of HOSTILE) {
      // In the middle of the valid value; in free text (body fields) also at its start and at its
      // end, where a trim would hide it.
      const middle = Math.max(1, Math.floor(input.valid.length / 2))
      const values = [
        input.valid.slice(0, middle) + text + input.valid.slice(middle),
        ...(input.in === 'body' ? [text + input.valid, input.valid + text] : [])
      ]
      for (const [v, value] of values.entries()) {
        // Headers take no lone surrogates; body values go escaped (\u0000) and raw (the UTF-8
        // bytes), path and query percent-encoded.
        if (input.in === 'header' && /[\ud800-\udfff]/.test(value)) continue
        for (const form of input.in === 'body'
          ? (['escaped', 'raw'] as const)
          : (['escaped'] as const)) {
          const res = await app.inject(hostile(input, value, form))
          sent++
          const body = res.json()
          const where = `${input.route} ${field} with ${kind} ` +
            `(${['middle', 'start', 'end'][v] ?? ''}, ${form})`
          if (res.statusCode !== 400 || body.code !== 'VALIDATION_FAILED') {
            t.fail(`${where}: answered ${res.statusCode} ${res.body.slice(0, 200)}`)
            continue
          }
          // Raw C0 controls are no valid JSON and a lone surrogate's bytes no UTF-8: the body as a
          // whole is refused. Those bytes in the path are no percent-encoding of UTF-8: the path as
          // a whole is.
          const whole =
            (form === 'raw' && input.in === 'body') ||
            (input.in === 'path' && /[\ud800-\udfff]/.test(text))
          const named = body.details?.find(
            (d: { field: string }) => d.field === field || (whole && d.field === input.in)
          )
          if (named === undefined) t.fail(`${where}: ${field} not named (${body.message})`)
          else if (
            input.format === 'identifier' ||
            input.format === 'text' ||
            input.format === 'date-time'
          ) {
            if (named.field === field && !/found U\+[0-9A-F]{4,5} \(/.test(named.rule)) {
              t.fail(`${where}: ` + `the rule does not name the character: ${named.rule}`)
            }
          }
        }
      }
    }
  }
  t.ok(sent > 1500, `${sent} hostile requests`)
  t.equal(sandbox.count(), 0, 'the hub received none of them')
  t.same(reachedTheHub(sandbox.requests), [])
})

test('an identifier that is empty, blank or padded is refused with the rule it ' +
  'breaks', async (t) => {
  const { app, sandbox } = await build(t)
  const { inputs, build: hostile } = textInputs(app.swagger() as Json)
  const identifiers = inputs.filter((i) => i.format === 'identifier')
  t.ok(
    identifiers.some((i) => i.name === 'serviceOrderId'),
    'serviceOrderId is an identifier'
  )
  for (const input of identifiers) {
    for (const { kind, value, rule } of NOT_IDENTIFIERS) {
      const res = await app.inject(hostile(input, value))
      t.equal(res.statusCode, 400, `${input.name} ${kind}`)
      t.ok(
        res
          .json()
          .details.some(
            (d: { field: string; rule: string }) =>
              d.field === `body.${input.name}` && rule.test(d.rule)
          ),
        `${input.name} ${kind}: ${res.json().message}`
      )
    }
  }
  t.equal(sandbox.count(), 0)
})

test('the note is one line of text: accepted with letters of any script, emoji and spaces, not ' +
  'with a line break', async (t) => {
  const { app, sandbox } = await build(t)
  const url = `/v1/bookings/${F.bookingRequestId}/booked`
  for (const note of [
    'Truk B 1234 XYZ, jemput 08:00',
    'Ἀθῆναι — 東京 — القاهرة — 🚚📦',
    '  two spaces around  ',
    'café (e + U+0301)'
  ]) {
    const res = await app.inject({ method: 'POST', url, payload: { booked: true, note } })
    t.equal(res.statusCode, 200, note)
    t.equal(res.json().data.note, note)
  }
  t.equal(sandbox.count(), 4)
  const res = await app.inject({
    method: 'POST',
    url,
    payload: { booked: true, note: 'line one\nline two' }
  })
  t.equal(res.statusCode, 400)
  t.match(res.json().details, [
    { field: 'body.note', rule: /found U\+000A \(a control character\) at character 9/ }
  ])
  t.equal(sandbox.count(), 4)
})

test('a name the caller made up is echoed with its refused characters escaped', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: '{"booked":true,"evil\\u202etxt.exe":1}',
    headers: { 'content-type': 'application/json' }
  })
  t.equal(res.statusCode, 400)
  t.match(res.json().details, [
    { field: 'body.evil\\u{202E}txt.exe', rule: 'is not a field of this body' }
  ])
  t.notOk(REFUSED.test(res.body.replaceAll('\\u', '')), 'nothing refused in the answer')
  const query = await app.inject({
    url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}&%E2%80%AE=1`
  })
  t.match(query.json().details, [
    { field: 'query.\\u{202E}', rule: 'is not a parameter of this route' }
  ])
})

test('a body that is not UTF-8 is refused as such, not read as replacement ' +
  'characters', async (t) => {
  const { app, sandbox } = await build(t)
  // A lone surrogate as raw bytes (ED A0 80), and a lone continuation byte.
  for (const bytes of [[0xed, 0xa0, 0x80], [0x80]]) {
    const payload = Buffer.concat([
      Buffer.from('{"booked":true,"note":"a'),
      Buffer.from(bytes),
      Buffer.from('b"}')
    ])
    const res = await app.inject({
      method: 'POST',
      url: `/v1/bookings/${F.bookingRequestId}/booked`,
      payload,
      headers: { 'content-type': 'application/json' }
    })
    t.equal(res.statusCode, 400)
    t.same(res.json().details, [{ field: 'body', rule: 'must be valid JSON: UTF-8 text' }])
  }
  t.equal(sandbox.count(), 0)
})

test('headers the gateway forwards: a hostile x-request-id is replaced, never sent on; a hostile ' +
  'Idempotency-Key is refused', async (t) => {
  const { app, sandbox } = await build(t)
  const url = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  for (const { kind, text } of HOSTILE.filter((h) => !/[\ud800-\udfff]/.test(h.text))) {
    const res = await app.inject({ url, headers: { 'x-request-id': `abc${text}def` } })
    t.equal(res.statusCode, 200, kind)
    t.not(res.headers['x-request-id'], `abc${text}def`, `${kind}: not echoed`)
  }
  t.same(reachedTheHub(sandbox.requests), [], 'no hostile request id reached the hub')
  const refused = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true },
    headers: { 'idempotency-key': 'key\u0085one' }
  })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().details, [
    { field: 'header.idempotency-key', rule: /found U\+0085 \(a control character\)/ }
  ])
})

test("the caller's hub token (forward mode) with a control or format character is refused before " +
  'any hub call', async (t) => {
  const { app, sandbox } = await build(t, {
    env: { UPSTREAM_CREDENTIALS: 'forward', UPSTREAM_ACCESS_TOKEN: '' }
  })
  const url = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  for (const { kind, text } of HOSTILE.filter((h) => !/[\ud800-\udfff]/.test(h.text))) {
    const res = await app.inject({
      url,
      headers: { 'x-upstream-authorization': `Bearer tok${text}en` }
    })
    t.equal(res.statusCode, 401, kind)
    t.match(res.json().details, [{ field: 'header.x-upstream-authorization' }], kind)
  }
  t.equal(sandbox.count(), 0)
})

test('raw bytes on the wire: a control or format character in the request line or a header is ' +
  'refused, nothing sent', async (t) => {
  const { app, sandbox } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const send = (bytes: Buffer) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      let text = ''
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1')
      })
      socket.on('error', () => {})
      socket.on('close', () => resolve(text))
      socket.end(bytes)
    })
  const line = (target: Buffer) =>
    Buffer.concat([
      Buffer.from('GET '),
      target,
      Buffer.from(' HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n')
    ])
  const path = Buffer.from('/v1/customs/bc28/containers?blNo=AB')
  for (const raw of [
    [0x00],
    [0x1b],
    [0x7f],
    [0xc2, 0x85],
    [0xe2, 0x80, 0xae],
    [0xed, 0xa0, 0x80]
  ]) {
    const answer = await send(line(Buffer.concat([path, Buffer.from(raw), Buffer.from('CD')])))
    t.match(
      answer,
      /^HTTP\/1\.1 400 /,
      `the byte(s) ${Buffer.from(raw).toString('hex')} in the query`
    )
  }
  const header = await send(
    Buffer.from(
      'GET /health/live HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: a\u0001b\r\nConnection: ' +
      'close\r\n\r\n',
      'latin1'
    )
  )
  t.match(header, /^HTTP\/1\.1 400 /, 'a control character in a header')
  t.equal(sandbox.count(), 0)
})

test('a route that takes text without a format of the gateway\'s does not start', async (t) => {
  const app = Fastify({
    ajv: REQUEST_AJV_OPTIONS,
    schemaController: { compilersFactory: { buildValidator: requestValidatorFactory() } }
  })
  app.post('/free', {
    schema: {
      body: {
        type: 'object',
        properties: {
          free: { type: 'string' },
          kind: { type: 'string', enum: ['a', 'b'] },
          id: { type: 'string', format: 'identifier' },
          when: { type: 'string', format: 'date' },
          list: { type: 'array', items: { type: 'string' } },
          either: { anyOf: [{ type: 'string', format: 'text' }, { type: ['string', 'null'] }] }
        }
      }
    }
  }, async () => ({}))
  await t.rejects(async () => {
    await app.ready()
  }, /POST \/free: body\.free, body\.when, body\.list\[\], body\.either must name a format of src\/schemas\/formats\.ts/)
  t.same(
    unformattedText(
      {
        type: 'object',
        additionalProperties: { type: 'string' },
        patternProperties: { '^x': { type: 'string', format: 'text' } }
      },
      'query'
    ),
    ['query.*']
  )
  t.same(unformattedText({ type: 'string', const: 'x' }, 'header'), [])
})
