import { test } from 'tap'
import { MAX_BODY_DEPTH } from '../../src/plugins/body-depth.ts'
import { ConfigError, loadConfig } from '../../src/config/load.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, type TestClient } from '../helpers/helper.ts'

const KEY = 'key-all-7f3a'
const CLIENTS: TestClient[] = [
  {
    name: 'all',
    key: KEY,
    scopes: ['customs:read', 'sp2:read', 'sp2:finalize', 'bookings:write', 'events:read']
  }
]
const AUTH = { authorization: `Bearer ${KEY}` }
const WRITES = [
  {
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
  },
  { url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true } },
  { url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`, payload: {} }
]

/** The CSP header as directive -> sources. */
function directives (header: unknown): Map<string, string[]> {
  return new Map(String(header).split(';').map(d => d.trim()).filter(Boolean).map(d => {
    const [name = '', ...sources] = d.split(/\s+/)
    return [name, sources]
  }))
}

test('helmet headers on answers, errors and the docs', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  for (const url of [
    `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
    '/v1/customs/bc20/bills-of-lading?npwp=1',
    '/nowhere',
    '/docs/',
    '/health/live'
  ]) {
    const res = await app.inject({ url, headers: AUTH })
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: nosniff`)
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', `${url}: frame options`)
    t.match(res.headers['strict-transport-security'], /max-age=\d+/, `${url}: HSTS`)
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${url}: referrer policy`)
    t.ok(res.headers['content-security-policy'], `${url}: CSP`)
    t.equal(res.headers['x-powered-by'], undefined)
  }
})

test('Swagger UI works under the CSP: its page loads only same-origin scripts and styles, no ' +
  'inline script', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  const page = await app.inject({ url: '/docs/' })
  t.equal(page.statusCode, 200)
  const csp = directives(page.headers['content-security-policy'])
  t.same(csp.get('script-src'), ["'self'"], 'scripts: same origin only')
  t.same(csp.get('script-src-attr'), ["'none'"], 'no inline event handlers')
  t.ok(csp.get('style-src')?.includes("'self'"), 'styles: same origin')
  t.ok(csp.get('img-src')?.includes('data:'), 'the inline logo (a data: URI) is allowed')
  t.notOk(
    csp.has('upgrade-insecure-requests'),
    'no upgrade-insecure-requests: /docs works on a plain-HTTP address'
  )
  t.equal(csp.get('connect-src'), undefined, '"Try it out" calls fall under default-src')
  t.same(csp.get('default-src'), ["'self'"])

  const scripts = [...page.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
  t.ok(scripts.length >= 3, `${scripts.length} scripts`)
  for (const [, attributes = '', content = ''] of scripts) {
    const src = /src="([^"]+)"/.exec(attributes)?.[1]
    t.ok(
      src !== undefined && !/^[a-z]+:|^\/\//i.test(src),
      `script ${src ?? '(inline)'} is same-origin`
    )
    t.equal(content.trim(), '', `script ${src ?? '(inline)'} has no inline code`)
    t.notMatch(attributes, /\bon[a-z]+=/i, 'no inline handler')
    const asset = await app.inject({ url: new URL(src ?? '', 'http://gateway/docs/').pathname })
    t.equal(asset.statusCode, 200, `${src} is served`)
    t.match(asset.headers['content-type'], /javascript/)
  }
  t.notMatch(page.body, /\son[a-z]+="/i, 'no inline event handler anywhere on the page')
  for (const [, href = ''] of page.body.matchAll(
    /<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g
  )) {
    t.notMatch(href, /^[a-z]+:|^\/\//i, `stylesheet ${href} is same-origin`)
    t.equal(
      (await app.inject({ url: new URL(href, 'http://gateway/docs/').pathname })).statusCode,
      200,
      `${href} is served`
    )
  }
  const spec = await app.inject({ url: '/docs/json' })
  t.equal(spec.statusCode, 200, 'the document Swagger UI loads')
  t.match(
    spec.json().components.securitySchemes.bearerAuth,
    { type: 'http', scheme: 'bearer' },
    'and its "Authorize" scheme'
  )
})

test('CORS: the allow-listed origins only, with the headers a browser client needs', async (t) => {
  const { app } = await build(t, {
    clients: CLIENTS,
    env: { CORS_ORIGINS: 'https://yard.example.co.id, http://localhost:5173' }
  })
  const url = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  const allowed = await app.inject({
    url,
    headers: { ...AUTH, origin: 'https://yard.example.co.id' }
  })
  t.equal(allowed.statusCode, 200)
  t.equal(allowed.headers['access-control-allow-origin'], 'https://yard.example.co.id')
  t.match(allowed.headers['access-control-expose-headers'], /x-request-id/)
  t.match(allowed.headers['access-control-expose-headers'], /retry-after/)
  t.match(allowed.headers['access-control-expose-headers'], /idempotent-replayed/)
  t.match(
    allowed.headers['access-control-expose-headers'],
    /\betag\b/,
    'a page reads the ETag to ask again with it'
  )
  t.equal(
    allowed.headers['access-control-allow-credentials'],
    undefined,
    'no cookies: keys travel in Authorization'
  )

  const other = await app.inject({ url, headers: { ...AUTH, origin: 'https://evil.example' } })
  t.equal(
    other.headers['access-control-allow-origin'],
    undefined,
    'another origin gets no CORS header'
  )

  const preflight = await app.inject({
    method: 'OPTIONS',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    headers: {
      origin: 'http://localhost:5173',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,idempotency-key'
    }
  })
  t.equal(preflight.statusCode, 204, 'a preflight needs no key')
  t.equal(preflight.headers['access-control-allow-origin'], 'http://localhost:5173')
  for (const header of ['authorization', 'content-type', 'idempotency-key']) {
    t.match(preflight.headers['access-control-allow-headers'], header)
  }
  t.match(preflight.headers['access-control-allow-methods'], /POST/)

  const conditional = await app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin: 'http://localhost:5173',
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization,if-none-match'
    }
  })
  t.match(
    conditional.headers['access-control-allow-headers'],
    'if-none-match',
    'a page may send If-None-Match'
  )
})

test('CORS: no CORS_ORIGINS, no CORS headers', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  const res = await app.inject({
    url: '/health/live',
    headers: { origin: 'https://yard.example.co.id' }
  })
  t.equal(res.headers['access-control-allow-origin'], undefined)
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/health/live',
    headers: { origin: 'https://yard.example.co.id', 'access-control-request-method': 'GET' }
  })
  // No CORS: OPTIONS is just a method the path does not take.
  t.equal(preflight.statusCode, 405)
  t.equal(preflight.json().code, 'METHOD_NOT_ALLOWED')
  t.equal(preflight.headers.allow, 'GET, HEAD')
  t.equal(preflight.headers['access-control-allow-origin'], undefined)
})

test('CORS_ORIGINS takes origins, not wildcards or paths', async (t) => {
  for (const bad of [
    '*',
    'yard.example.co.id',
    'https://yard.example.co.id/app',
    'https://a.example,*'
  ]) {
    t.throws(() => loadConfig({ CORS_ORIGINS: bad }), ConfigError, bad)
  }
  t.doesNotThrow(() =>
    loadConfig({ CORS_ORIGINS: 'https://a.example.co.id,http://localhost:5173' })
  )
})

test('POST bodies: JSON only (415), bounded (413), and never polluting', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  for (const { url, payload } of WRITES) {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/jsonx'
    ]) {
      const res = await app.inject({
        method: 'POST',
        url,
        payload: JSON.stringify(payload),
        headers: { ...AUTH, 'content-type': type }
      })
      t.equal(res.statusCode, 415, `${url} as ${type}`)
      t.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE')
    }
    const noType = await app.inject({
      method: 'POST',
      url,
      payload: 'booked',
      headers: { ...AUTH, 'content-type': '' }
    })
    t.equal(noType.statusCode, 415, `${url}: a body without a type`)
    const large = await app.inject({
      method: 'POST',
      url,
      payload: JSON.stringify({ ...payload, note: 'x'.repeat(70_000) }),
      headers: { ...AUTH, 'content-type': 'application/json' }
    })
    t.equal(large.statusCode, 413, `${url}: 70 KB`)
    t.equal(large.json().code, 'PAYLOAD_TOO_LARGE')
    for (const poison of [
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"booked":true,"nested":{"__proto__":{"polluted":true}}}'
    ]) {
      const res = await app.inject({
        method: 'POST',
        url,
        payload: poison,
        headers: { ...AUTH, 'content-type': 'application/json' }
      })
      t.equal(res.statusCode, 400, `${url}: ${poison}`)
      t.equal(res.json().code, 'VALIDATION_FAILED')
    }
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
  t.equal(sandbox.count(), 0, 'none of it reached the hub')
  const charset = await app.inject({
    method: 'POST',
    url: WRITES[1]!.url,
    payload: '{"booked":true}',
    headers: { ...AUTH, 'content-type': 'application/json; charset=utf-8' }
  })
  t.equal(charset.statusCode, 200, 'application/json with a charset is JSON')
})

test('a deeply nested body is a 400 naming the depth limit, on every route that takes a body, ' +
  'with or without an Idempotency-Key', async (t) => {
  const { app, sandbox, logs } = await build(t, { clients: CLIENTS })
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
  const urls = [...WRITES.map((w) => w.url)]
  for (const url of urls) {
    for (const payload of [deep(5000), `{"a":${'{"a":'.repeat(40)}1${'}'.repeat(41)}`, deep(33)]) {
      for (const idem of [{}, { 'idempotency-key': `deep-${payload.length}` }]) {
        const res = await app.inject({
          method: 'POST',
          url,
          payload,
          headers: { ...AUTH, ...idem, 'content-type': 'application/json' }
        })
        t.equal(res.statusCode, 400, `${url}: ${payload.length} bytes nested`)
        t.same(res.json().details, [
          { field: 'body', rule: `must be nested at most ${MAX_BODY_DEPTH} levels deep` }
        ])
      }
    }
  }
  t.equal(sandbox.count(), 0, 'none of it reached the hub')
  t.same(
    logs.filter((l) => Number(l.level) >= 50),
    [],
    'no error logged'
  )
  // 32 levels is within the limit: no body takes an array, so the schema refuses it, not the depth
  // rule.
  const within = await app.inject({
    method: 'POST',
    url: WRITES[2]!.url,
    payload: deep(MAX_BODY_DEPTH),
    headers: { ...AUTH, 'idempotency-key': 'deep-ok', 'content-type': 'application/json' }
  })
  t.equal(within.statusCode, 400)
  t.notMatch(within.body, 'levels deep', 'the depth limit is not what refused it')
  t.equal(sandbox.count(), 0)
})

test('no caller header reaches the hub: not its key, its Idempotency-Key, cookies or forwarding ' +
  'headers', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  const caller = {
    ...AUTH,
    'idempotency-key': 'caller-idem-1',
    cookie: 'session=caller-cookie',
    'x-forwarded-for': '203.0.113.9',
    origin: 'https://caller.example',
    'x-custom': 'caller-value'
  }
  for (const { url, payload } of WRITES) {
    sandbox.reset()
    const res = await app.inject({ method: 'POST', url, payload, headers: caller })
    t.equal(res.statusCode, 200, url)
    const sent = sandbox.requests[0]?.headers ?? {}
    const text = JSON.stringify(sent)
    for (const value of [
      KEY,
      'caller-idem-1',
      'caller-cookie',
      '203.0.113.9',
      'caller.example',
      'caller-value'
    ]) { t.notOk(text.includes(value), `${url}: ${value} not sent`) }
    t.same(
      Object.keys(sent).filter(
        (h) =>
          ![
            'host',
            'connection',
            'accept',
            'user-agent',
            'x-request-id',
            'content-type',
            'content-length',
            'customs-api-key',
            'authorization'
          ].includes(h)
      ),
      [],
      `${url}: only the contract's headers`
    )
  }
})
