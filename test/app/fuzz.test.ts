import { STATUS_CODES } from 'node:http'
import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { test } from 'tap'
import { SCOPES } from '../../src/catalogue/scopes.ts'
import { errors } from '../../src/errors.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { operationsOf } from '../../src/catalogue/operations.ts'
import { build } from '../helpers/helper.ts'

/**
 * Property-based hostile input against every route (fast-check, fixed seed).
 * For every generated request: never a 5xx, never a crash (no error log line,
 * the app still answers), every error in the envelope, and the hub (the
 * sandbox, which counts what it receives) is reached exactly when the request
 * was valid: a call reached it only if the answer is a 2xx or an UPSTREAM_*
 * error, and an UPSTREAM_* error only comes from a call that reached it.
 */
const SEED = 20240301
const RUNS = { pathParams: 1500, queries: 1500, bodies: 1500, headers: 900, unknown: 700 }
const KEY = 'cgw_fuzzer_0123456789abcdefghijklmnopqrstuvwxyzABCDE'
const GOOD = { authorization: `Bearer ${KEY}` }

// --- values --------------------------------------------------------------------

const VALID = [
  F.taxpayer.npwp,
  F.sp2.npwp,
  F.sp2.blNo,
  F.sp2.blDate,
  F.sp2.containerNo,
  F.declaration.pibNo,
  F.declaration.blNo,
  F.declaration.npwp,
  F.bookingRequestId,
  F.sp2.sp2Id,
  '2024-01-01',
  '01.234.567.8-901.000'
]
const ATTACKS = [
  '../',
  '..%2f',
  '%2e%2e%2f',
  '..%252f',
  '..\\',
  '%5c',
  '%2F',
  '/',
  '//',
  '%00',
  '\u0000',
  '%0d%0a',
  '\r\n',
  '%',
  '%zz',
  '%E0%A4%A',
  '__proto__',
  'constructor',
  'prototype',
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'toString',
  'hasOwnProperty',
  '$(id)',
  '`id`',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '{{7*7}}',
  '$' + '{7*7}',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-1',
  '1e309',
  '0x10',
  '[]',
  '{}',
  ' ',
  '',
  '\uFEFF',
  '\u202E',
  '\u{1F6A2}',
  '\u00e4',
  '*',
  '?',
  '#',
  '&',
  '=',
  ';',
  '|',
  '\t'
]
const control = fc
  .array(fc.integer({ min: 0, max: 31 }), { minLength: 1, maxLength: 8 })
  .map((codes) => String.fromCharCode(...codes))
const long = fc
  .tuple(
    fc.integer({ min: 100, max: 20_000 }),
    fc.constantFrom('A', '9', '%2F', '../', '\u00e4', '0.')
  )
  .map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n))
const nearValid = fc
  .tuple(
    fc.constantFrom(...VALID),
    fc.nat(64),
    fc.constantFrom('', 'x', '/', '%2F', '\u0000', ' ', '..', '-', '.', '0', '%', '\n')
  )
  .map(([value, at, insert]) => {
    const i = at % (value.length + 1)
    return value.slice(0, i) + insert + value.slice(i)
  })
const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ATTACKS),
  control,
  long,
  nearValid,
  fc.constantFrom(...VALID),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.array(fc.constantFrom(...ATTACKS), { minLength: 2, maxLength: 6 }).map(parts => parts.join(''))
)

/** How a value goes into a URL: as is, percent-encoded, or encoded twice. */
function encode (value: string, mode: 'raw' | 'once' | 'twice'): string {
  try {
    if (mode === 'once') return encodeURIComponent(value)
    if (mode === 'twice') return encodeURIComponent(encodeURIComponent(value))
  } catch {
    // A lone surrogate cannot be encoded: send it raw.
  }
  return value
}
const encoding = fc.constantFrom('raw' as const, 'once' as const, 'once' as const, 'twice' as const)
const urlValue = fc.tuple(hostile, encoding).map(([value, mode]) => encode(value, mode))

/**
 * Header values as HTTP can carry them (visible ASCII, space, tab); Node's parser refuses anything
 * else before the gateway.
 */
const headerValue = hostile.map(v => v.replace(/[^\x20-\x7e\t]/g, ''))

// --- requests ------------------------------------------------------------------

interface Request {
  method: InjectOptions['method']
  url: string
  headers: Record<string, string>
  payload?: string
}

const offer = { serviceOrderId: 'SO-1', price: 10.5, offeredAt: '2024-03-01T08:15:00+07:00' }
const booked = { booked: true, note: 'fuzz' }
const GET_ROUTES: Array<{ path: string; params: string[] }> = [
  ...['bc16', 'bc20', 'bc23'].map((type) => ({
    path: `/v1/customs/${type}/bills-of-lading`,
    params: ['npwp']
  })),
  { path: `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading`, params: [] },
  { path: `/v1/customs/bc20/declarations/${F.declaration.pibNo}`, params: ['npwp'] },
  { path: '/v1/customs/bc20/declarations', params: ['blNo'] },
  ...operationsOf('container-list').map((op) => ({
    path: op.route.url,
    params: ['blNo', 'blDate']
  })),
  { path: '/v1/sp2/documents', params: ['npwp', 'blNo', 'blDate'] },
  { path: '/v1/sp2/containers', params: ['npwp', 'blNo', 'blDate', 'containerNo'] },
  { path: '/v1/events', params: [] },
  ...['/health/live', '/health/ready', '/metrics', '/openapi.json', '/docs/'].map((path) => ({
    path,
    params: []
  }))
]
const PARAM_NAMES = [
  'npwp',
  'blNo',
  'blDate',
  'containerNo',
  'pibNo',
  '__proto__',
  'constructor',
  'npwp[]',
  'npwp[0]',
  'a[b]',
  'toString',
  'hasOwnProperty',
  ''
]

const pathParamRequest: fc.Arbitrary<Request> = fc
  .tuple(fc.constantFrom('taxpayer', 'declaration', 'finalization', 'offers', 'booked'), urlValue)
  .map(([route, value]) => {
    switch (route) {
      case 'taxpayer':
        return { method: 'GET', url: `/v1/taxpayers/${value}/bills-of-lading`, headers: GOOD }
      case 'declaration':
        return {
          method: 'GET',
          url: `/v1/customs/bc20/declarations/${value}?npwp=${F.declaration.npwp}`,
          headers: GOOD
        }
      case 'finalization':
        return { method: 'POST', url: `/v1/sp2/documents/${value}/finalization`, headers: GOOD }
      case 'offers':
        return {
          method: 'POST',
          url: `/v1/bookings/${value}/offers`,
          headers: { ...GOOD, 'content-type': 'application/json' },
          payload: JSON.stringify(offer)
        }
      default:
        return {
          method: 'POST',
          url: `/v1/bookings/${value}/booked`,
          headers: { ...GOOD, 'content-type': 'application/json' },
          payload: JSON.stringify(booked)
        }
    }
  })

const queryPair = fc.tuple(
  fc.oneof(fc.constantFrom(...PARAM_NAMES), urlValue),
  fc.oneof(fc.constantFrom(...VALID), urlValue)
)
const queryRequest: fc.Arbitrary<Request> = fc
  .tuple(fc.constantFrom(...GET_ROUTES), fc.array(queryPair, { maxLength: 6 }), fc.boolean())
  .map(([route, pairs, withValid]) => {
    // Half the time, start from the route's own parameters with valid values, then add the hostile
    // pairs.
    const base = withValid
      ? route.params.map((name) => {
        const value = name === 'blDate'
          ? F.sp2.blDate
          : name === 'containerNo' ? F.sp2.containerNo : name === 'npwp' ? F.sp2.npwp : F.sp2.blNo
        return `${name}=${encodeURIComponent(value)}`
      })
      : []
    const query = [
      ...base,
      ...pairs.map(([name, value]) => `${encode(name, 'raw')}=${value}`)
    ].join('&')
    return {
      method: 'GET',
      url: query === '' ? route.path : `${route.path}?${query}`,
      headers: GOOD
    }
  })

const jsonText = fc.jsonValue({ maxDepth: 4 }).map(v => JSON.stringify(v))
const mutatedBody = (body: Record<string, unknown>) =>
  fc
    .tuple(
      fc.constantFrom(...Object.keys(body), 'extra', '__proto__', 'constructor'),
      fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostile)
    )
    .map(([key, value]) => {
      // Written as text so that a `__proto__` key really is in the body.
      const rest = Object.entries(body)
        .filter(([k]) => k !== key)
        .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
      return `{${[...rest, `${JSON.stringify(key)}:${JSON.stringify(value) ?? 'null'}`].join(',')}}`
    })
const bodyText = (body: Record<string, unknown>) =>
  fc.oneof(
    { arbitrary: mutatedBody(body), weight: 4 },
    { arbitrary: jsonText, weight: 2 },
    {
      arbitrary: fc.constantFrom(
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
        '{"booked":true,"__proto__":{"isAdmin":true}}'
      ),
      weight: 1
    },
    {
      arbitrary: fc.integer({ min: 1, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
      weight: 1
    },
    {
      arbitrary: fc
        .integer({ min: 1, max: 5000 })
        .map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
      weight: 1
    },
    {
      arbitrary: fc
        .integer({ min: 60_000, max: 300_000 })
        .map((n) => JSON.stringify({ ...body, note: 'x'.repeat(n) })),
      weight: 1
    },
    { arbitrary: hostile, weight: 2 },
    { arbitrary: fc.constant(''), weight: 1 }
  )
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'application/vnd.api+json',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1'
]
const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 6 },
  { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 3 },
  { arbitrary: fc.constant(undefined), weight: 1 }
)
const bodyRequest: fc.Arbitrary<Request> = fc
  .oneof(
    fc
      .tuple(bodyText(offer), contentType)
      .map(([payload, type]) => ({
        url: `/v1/bookings/${F.bookingRequestId}/offers`,
        payload,
        type
      })),
    fc
      .tuple(bodyText(booked), contentType)
      .map(([payload, type]) => ({
        url: `/v1/bookings/${F.bookingRequestId}/booked`,
        payload,
        type
      })),
    fc
      .tuple(bodyText({}), contentType)
      .map(([payload, type]) => ({
        url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`,
        payload,
        type
      }))
  )
  .map(({ url, payload, type }) => ({
    method: 'POST',
    url,
    payload,
    headers: { ...GOOD, ...(type === undefined ? {} : { 'content-type': type }) }
  }))

const VALID_REQUESTS: Request[] = [
  { method: 'GET', url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`, headers: {} },
  {
    method: 'GET',
    url: `/v1/sp2/documents?npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}`,
    headers: {}
  },
  { method: 'GET', url: '/v1/events', headers: {} },
  { method: 'GET', url: '/health/ready', headers: {} },
  {
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(offer)
  },
  {
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(booked)
  },
  { method: 'POST', url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`, headers: {} }
]
const HEADER_NAMES = [
  'x-request-id',
  'idempotency-key',
  'cache-control',
  'x-forwarded-for',
  'cookie',
  'origin',
  'x-upstream-authorization',
  'customs-api-key',
  'accept',
  'accept-encoding',
  'sec-websocket-protocol',
  'upgrade',
  'x-http-method-override',
  'x-custom'
]
const authorization = fc.oneof(
  { arbitrary: fc.constant(GOOD.authorization), weight: 4 },
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: headerValue, weight: 1 },
  { arbitrary: headerValue.map((v) => `Bearer ${v}`), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      `bearer ${KEY}`,
      `Bearer  ${KEY} `,
      `Basic ${KEY}`,
      `Bearer ${KEY}x`,
      `Bearer ${KEY.slice(0, -1)}`
    ),
    weight: 1
  }
)
const headerRequest: fc.Arbitrary<Request> = fc
  .tuple(
    fc.constantFrom(...VALID_REQUESTS),
    authorization,
    fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), headerValue), { maxLength: 4 })
  )
  .map(([base, auth, extra]) => ({
    ...base,
    headers: {
      ...base.headers,
      ...Object.fromEntries(extra),
      ...(auth === undefined ? {} : { authorization: auth })
    }
  }))

const SEGMENTS = [
  'v1',
  'customs',
  'taxpayers',
  'sp2',
  'bookings',
  'events',
  'documents',
  'containers',
  'health',
  'docs',
  'static',
  'metrics',
  'bc20',
  '..',
  '.',
  ''
]
const unknownRequest: fc.Arbitrary<Request> = fc
  .tuple(
    fc.constantFrom<InjectOptions['method']>(
      'GET',
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'HEAD'
    ),
    fc.array(fc.oneof(fc.constantFrom(...SEGMENTS), urlValue), { minLength: 1, maxLength: 8 })
  )
  .map(([method, segments]) => ({ method, url: `/${segments.join('/')}`, headers: GOOD }))

// --- the properties ------------------------------------------------------------

/**
 * Two turns of the event loop, so that its timers run in between. app.inject never leaves the
 * process: a run of requests that do not reach the hub is one stretch of promise callbacks in
 * which no timer fires (on a busy machine, seconds of it). The hub pool's keep-alive expiry and
 * the sandbox's idle timeout then both fell due unseen, and the next hub call went out on a
 * connection the sandbox closed as it arrived: ECONNRESET, a 502. Requests that come in on
 * sockets give the timers their turn between them; these get it here.
 */
async function turnsOfTheLoop (): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise(resolve => setImmediate(resolve))
}

const ENVELOPE_KEYS = new Set([
  'statusCode',
  'code',
  'error',
  'message',
  'requestId',
  'upstreamMessage',
  'details'
])
const SAFE_TO_HUB = new Set([
  'host',
  'connection',
  'accept',
  'user-agent',
  'x-request-id',
  'content-type',
  'content-length',
  'customs-api-key',
  'authorization'
])

test('hostile input on every route: no 5xx, no crash, the envelope on every error, nothing ' +
  'invalid reaches the hub', async (t) => {
  const { app, sandbox, logs } = await build(t, {
    clients: [{ name: 'fuzzer', key: KEY, scopes: [...SCOPES], rateLimit: { max: 1_000_000 } }],
    env: { RATE_LIMIT_MAX: '1000000' },
    logLevel: 'warn'
  })
  /** The messages (and causes) of the lines logged since line `from`. */
  const loggedOf = (from: number): string =>
    JSON.stringify(
      logs.slice(from).map((line) => {
        const err = line.err as { code?: string; message?: string } | undefined
        return `${String(line.msg)}` +
          `${err === undefined ? '' : ` (${err.code ?? err.message ?? ''})`}`
      })
    )
  const stats = {
    requests: 0,
    hubCalls: 0,
    byStatus: new Map<number, number>(),
    byCode: new Map<string, number>()
  }

  function problemsOf (request: Request, res: LightMyRequestResponse, before: number): string[] {
    const problems: string[] = []
    const status = res.statusCode
    // The sandbox keeps only its newest requests: take as many as were counted since `before`.
    const made = sandbox.count() - before
    const calls = made === 0 ? [] : sandbox.requests.slice(-made)
    if (status >= 500) problems.push(`answered ${status}`)
    if (!/^[A-Za-z0-9\-_.:]{1,128}$/.test(String(res.headers['x-request-id']))) {
      problems.push('no ' + 'sane x-request-id')
    }
    let code: string | undefined
    if (status >= 400 && request.method !== 'HEAD') {
      let body: Record<string, unknown> = {}
      try {
        body = res.json()
      } catch {
        problems.push(`error body is not JSON: ${res.body.slice(0, 80)}`)
      }
      code = typeof body.code === 'string' ? body.code : undefined
      if (!String(res.headers['content-type']).startsWith('application/json')) {
        problems.push('error ' + 'is not application/json')
      }
      if (body.statusCode !== status) problems.push('envelope statusCode differs')
      if (code === undefined || !Object.hasOwn(errors, code)) {
        problems.push('unknown code ' +
        `${String(body.code)}`)
      }
      if (body.error !== STATUS_CODES[status]) problems.push('envelope error differs')
      if (typeof body.message !== 'string' || body.message === '') {
        problems.push('envelope has ' +
        'no message')
      }
      if (body.requestId !== res.headers['x-request-id']) {
        problems.push('envelope requestId ' +
        'differs from x-request-id')
      }
      const extra = Object.keys(body).filter((k) => !ENVELOPE_KEYS.has(k))
      if (extra.length > 0) problems.push(`envelope has ${extra.join(', ')}`)
    }
    const reached = calls.length > 0
    const fromHub = code?.startsWith('UPSTREAM_') === true
    if (reached && !(status < 300 || fromHub)) {
      problems.push('reached the hub but answered ' +
      `${status} ${String(code)}`)
    }
    if (fromHub && !reached) problems.push(`${String(code)} without a hub call`)
    for (const call of calls) {
      const leaked = Object.keys(call.headers).filter((h) => !SAFE_TO_HUB.has(h))
      if (leaked.length > 0) problems.push(`headers sent to the hub: ${leaked.join(', ')}`)
      if (JSON.stringify(call.headers).includes(KEY)) {
        problems.push('the client key reached ' +
        'the hub')
      }
    }
    return problems
  }

  async function send (request: Request): Promise<void> {
    await turnsOfTheLoop()
    const before = sandbox.count()
    const logged = logs.length
    const res = await app.inject({
      method: request.method,
      url: request.url,
      headers: request.headers,
      ...(request.payload === undefined ? {} : { payload: request.payload })
    })
    stats.requests++
    stats.byStatus.set(res.statusCode, (stats.byStatus.get(res.statusCode) ?? 0) + 1)
    if (sandbox.count() > before) stats.hubCalls++
    if (res.statusCode >= 400 && request.method !== 'HEAD') {
      const code = String((res.json() as { code?: unknown }).code)
      stats.byCode.set(code, (stats.byCode.get(code) ?? 0) + 1)
    }
    const problems = problemsOf(request, res, before)
    if (problems.length > 0) {
      // What the gateway logged of it (an upstream failure's cause) says where to look.
      problems.push(`logged: ${loggedOf(logged)}`)
      throw new Error(
        `${request.method} ${request.url.slice(0, 300)} ` +
        `${JSON.stringify(request.headers).slice(0, 300)} ` +
        `${String(request.payload).slice(0, 200)}: ${problems.join('; ')}`
      )
    }
  }

  const started = Date.now()
  const properties: Array<[string, fc.Arbitrary<Request>, number]> = [
    [
      'path parameters: traversal, encoded slashes, control characters, very long values',
      pathParamRequest,
      RUNS.pathParams
    ],
    [
      'query strings: wrong types, repeated and unknown names, __proto__',
      queryRequest,
      RUNS.queries
    ],
    ['bodies: wrong types, __proto__ keys, deep nesting, huge, not JSON', bodyRequest, RUNS.bodies],
    ['headers: keys, request ids, idempotency keys, anything', headerRequest, RUNS.headers],
    ['unknown routes and methods', unknownRequest, RUNS.unknown]
  ]
  for (const [name, arbitrary, numRuns] of properties) {
    await t.test(name, async (t) => {
      const from = stats.requests
      try {
        await fc.assert(fc.asyncProperty(arbitrary, send), {
          seed: SEED,
          numRuns,
          endOnFailure: true
        })
        t.pass(`${numRuns} runs`)
      } catch (error) {
        // fast-check's message: the counterexample first, our problems at the end; keep both ends.
        const message = String(error instanceof Error ? error.message : error)
        t.fail(
          message.length > 2000 ? `${message.slice(0, 700)} … ${message.slice(-1300)}` : message
        )
      }
      t.comment(`${stats.requests - from} requests`)
    })
  }

  t.same(
    logs.filter((l) => typeof l.level === 'number' && l.level >= 50).map((l) => l.msg),
    [],
    'no error was logged: no INTERNAL, no unhandled error'
  )
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is not polluted')
  t.equal(({} as Record<string, unknown>).isAdmin, undefined)
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'still alive')
  await turnsOfTheLoop()
  const logged = logs.length
  const serving = await app.inject({
    url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
    headers: GOOD
  })
  t.equal(
    serving.statusCode,
    200,
    `still serving: ${serving.body.slice(0, 300)}; logged: ${loggedOf(logged)}`
  )

  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  const statuses = [...stats.byStatus.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ')
  const codes = [...stats.byCode.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${c} ${n}`)
    .join(', ')
  t.comment(
    `fuzz: ${stats.requests} requests in ${seconds} s (seed ${SEED}); ${stats.hubCalls} reached ` +
    `the hub; statuses ${statuses}; codes ${codes}`
  )
  t.ok(stats.requests >= 6000, `${stats.requests} requests`)
  t.ok(
    stats.hubCalls > 100 && stats.hubCalls < stats.requests / 2,
    'both valid and invalid requests were generated'
  )
})
