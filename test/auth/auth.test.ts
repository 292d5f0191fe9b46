import { once } from 'node:events'
import { test } from 'tap'
import WebSocket from 'ws'
import { buildApp, serverOptions } from '../../src/app.ts'
import { createClientRegistry } from '../../src/auth/clients.ts'
import { hashClientKey } from '../../src/auth/keys.ts'
import { SCOPES, type Scope } from '../../src/catalogue/scopes.ts'
import { ConfigError } from '../../src/config/load.ts'
import { resolveConfig, type GatewayConfig } from '../../src/config/resolve.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import Fastify from 'fastify'
import gateway from '../../src/app.ts'
import { build, writeClientsFile, writeTempFile, type TestClient } from '../helpers/helper.ts'

/**
 * docs/api.md#scopes-and-limits, written out independently of src/catalogue/scopes.ts: the scopes
 * each route needs (all of them), or null for the public ones. A shipment
 * answers customs and SP2 data at once: it needs the scopes of both.
 */
function contractScopes (method: string, path: string): Scope[] | null {
  if (path.startsWith('/v1/shipments/')) return ['customs:read', 'sp2:read']
  if (path.startsWith('/v1/customs/') || path.startsWith('/v1/taxpayers/')) return ['customs:read']
  if (path.startsWith('/v1/sp2/')) return [method === 'get' ? 'sp2:read' : 'sp2:finalize']
  if (path.startsWith('/v1/bookings/')) return ['bookings:write']
  if (path === '/v1/events' || path.startsWith('/v1/events/')) return ['events:read']
  return null
}

/** For every scope, a client holding only it and one holding every other scope. */
// The events:read-only client sees every client's events (`"events": "all"`), as a monitoring app
// would.
const CLIENTS: TestClient[] = [
  ...SCOPES.flatMap((scope) => [
    {
      name: `only-${scope.replace(':', '-')}`,
      key: `key-only-${scope.replace(':', '-')}`,
      scopes: [scope],
      ...(scope === 'events:read' ? { events: 'all' as const } : {})
    },
    {
      name: `all-but-${scope.replace(':', '-')}`,
      key: `key-all-but-${scope.replace(':', '-')}`,
      scopes: SCOPES.filter((s) => s !== scope)
    }
  ]),
  {
    name: 'customs-and-sp2',
    key: 'key-only-customs-read+sp2-read',
    scopes: ['customs:read', 'sp2:read']
  }
]
const only = (...scopes: Scope[]) =>
  `Bearer key-only-${scopes.map((scope) => scope.replace(':', '-')).join('+')}`
const allBut = (scope: Scope) => `Bearer key-all-but-${scope.replace(':', '-')}`

interface Parameter {
  name: string
  in: string
  example?: unknown
  schema?: { examples?: unknown[] }
}
interface Operation {
  parameters?: Parameter[]
  security?: Array<Record<string, string[]>>
  description?: string
  responses?: Record<string, unknown>
  requestBody?: {
    content: Record<string, { schema: { properties?: Record<string, { examples?: unknown[] }> } }>
  }
}
interface Sample {
  route: string
  method: 'GET' | 'POST'
  url: string
  payload?: Record<string, unknown>
}

/** Every documented route, filled with its examples (as Swagger UI's "Try it out" would). */
function samples (doc: {
  paths: Record<string, Record<string, Operation>>
}): Array<Sample & { op: Operation; path: string }> {
  const out: Array<Sample & { op: Operation; path: string }> = []
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      let url = path
      const query = new URLSearchParams()
      for (const p of op.parameters ?? []) {
        const example = p.example ?? p.schema?.examples?.[0]
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(example)))
        if (p.in === 'query') query.set(p.name, String(example))
      }
      const properties = op.requestBody?.content['application/json']?.schema.properties
      const payload =
        properties === undefined
          ? undefined
          : Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v.examples?.[0]]))
      out.push({
        route: `${method.toUpperCase()} ${path}`,
        path,
        op,
        method: method.toUpperCase() as 'GET' | 'POST',
        url: query.size > 0 ? `${url}?${query}` : url,
        ...(payload === undefined ? {} : { payload })
      })
    }
  }
  return out
}

test('scope matrix: every route with a key holding its scope, a key lacking it, no key and a ' +
  'wrong key', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS })
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }
  const all = samples(doc)
  t.ok(all.length >= 25, `${all.length} routes`)
  let scoped = 0
  for (const s of all) {
    const scopes = contractScopes(s.method.toLowerCase(), s.path)
    const send = (authorization?: string) =>
      app.inject({
        method: s.method,
        url: s.url,
        ...(s.payload === undefined ? {} : { payload: s.payload }),
        headers: authorization === undefined ? {} : { authorization }
      })
    if (scopes === null) {
      for (const authorization of [undefined, 'Bearer not-a-key']) {
        const res = await send(authorization)
        t.equal(res.statusCode, 200, `${s.route} is public (${authorization ?? 'no key'})`)
      }
      continue
    }
    scoped++
    // The WebSocket route answers a plain GET with 426 once the caller is allowed.
    const allowed = s.path === '/v1/events' ? 426 : 200
    const before = sandbox.count()

    const noKey = await send()
    t.equal(noKey.statusCode, 401, `${s.route}: no key`)
    t.equal(noKey.json().code, 'UNAUTHORIZED', `${s.route}: no key code`)
    t.equal(
      noKey.headers['www-authenticate'],
      'Bearer realm="customs-gateway"',
      `${s.route}: no key challenge`
    )

    const wrong = await send('Bearer key-nobody-has')
    t.equal(wrong.statusCode, 401, `${s.route}: wrong key`)
    t.equal(wrong.json().code, 'UNAUTHORIZED', `${s.route}: wrong key code`)

    for (const scope of scopes) {
      const lacking = await send(allBut(scope))
      t.equal(lacking.statusCode, 403, `${s.route}: a key with every scope but ${scope}`)
      const body = lacking.json()
      t.equal(body.code, 'FORBIDDEN')
      t.match(body.message, scope, `${s.route}: the message names ${scope}`)
      t.equal(body.requestId, lacking.headers['x-request-id'])
      t.match(lacking.headers['www-authenticate'], `error="insufficient_scope", scope="${scope}"`)
    }
    t.equal(sandbox.count(), before, `${s.route}: refused callers never reach the hub`)

    // The event stream never ends: its allowed answer is test/routes/events-stream.test.ts's.
    if (s.path === '/v1/events/stream') continue
    const ok = await send(only(...scopes))
    t.equal(
      ok.statusCode,
      allowed,
      `${s.route}: a key with only ${scopes.join(' and ')}: ${ok.body.slice(0, 120)}`
    )
  }
  t.equal(scoped, all.filter((s) => s.path.startsWith('/v1/')).length, 'every /v1 route is scoped')
  t.ok(scoped >= 22, `${scoped} scoped routes`)
})

test('the bearer scheme is case-insensitive; anything else is 401', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  const url = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  for (const authorization of [
    'bearer key-only-customs-read',
    'BEARER  key-only-customs-read',
    'Bearer key-only-customs-read '
  ]) {
    t.equal(
      (await app.inject({ url, headers: { authorization } })).statusCode,
      200,
      JSON.stringify(authorization)
    )
  }
  for (const authorization of [
    'key-only-customs-read',
    'Basic key-only-customs-read',
    'Bearer',
    'Bearer key-only-customs-read extra',
    'Bearer KEY-ONLY-CUSTOMS-READ',
    `Bearer ${'x'.repeat(600)}`,
    ''
  ]) {
    const res = await app.inject({ url, headers: { authorization } })
    t.equal(res.statusCode, 401, JSON.stringify(authorization.slice(0, 40)))
  }
  const res = await app.inject({ url: `${url}&access_token=key-only-customs-read` })
  t.equal(res.statusCode, 401, 'a key in the query string is never accepted')
})

test('the OpenAPI document declares the bearer scheme and each route\'s scope', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  const doc = app.swagger() as unknown as {
    components: { securitySchemes: Record<string, Record<string, string>> }
    paths: Record<string, Record<string, Operation>>
  }
  t.match(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' })
  for (const scope of SCOPES) t.match(doc.components.securitySchemes.bearerAuth?.description, scope)
  for (const s of samples(doc)) {
    const scopes = contractScopes(s.method.toLowerCase(), s.path)
    if (scopes === null) {
      t.equal(s.op.security, undefined, `${s.route}: no security requirement`)
      continue
    }
    t.same(s.op.security, [{ bearerAuth: scopes }], `${s.route}: security requirement`)
    const named =
      scopes.length === 1
        ? `**Scope:** \`${scopes[0]}\``
        : `**Scopes:** ${scopes.map((scope) => `\`${scope}\``).join(' and ')}, all of them`
    t.match(s.op.description, named, `${s.route}: the description names the scopes`)
    for (const status of ['401', '403', '429']) {
      t.ok(status in (s.op.responses ?? {}), `${s.route}: ` + `declares ${status}`)
    }
  }
})

/** The gateway with a hook of the test's that reads request.client. */
async function appSeeingClient (
  t: Parameters<Parameters<typeof test>[0]>[0],
  env: Record<string, string>
) {
  const config = configFor(env)
  const app = Fastify(serverOptions(config))
  t.teardown(() => app.close())
  await app.register(gateway, { config, sandbox: true })
  const seen: unknown[] = []
  app.addHook('onResponse', async (request) => {
    seen.push(request.client)
  })
  await app.ready()
  return { app, seen }
}

test('with authentication off (sandbox, no CLIENTS_FILE) request.client is null, whatever the ' +
  'caller sends', async (t) => {
  const { app, seen } = await appSeeingClient(t, {})
  t.equal(app.clients, null)
  t.equal(
    (
      await app.inject({
        url: '/health/live',
        headers: { authorization: `Bearer ${CLIENTS[0]!.key}` }
      })
    ).statusCode,
    200
  )
  t.same(seen, [null])
})

test('request.client names the caller and its scopes; null for an unknown key', async (t) => {
  const { app, seen } = await appSeeingClient(t, { CLIENTS_FILE: writeClientsFile(t, CLIENTS) })
  await app.inject({ url: '/health/live', headers: { authorization: only('sp2:read') } })
  await app.inject({ url: '/health/live', headers: { authorization: 'Bearer nobody' } })
  await app.inject({ url: '/health/live' })
  t.same(seen, [
    { name: 'only-sp2-read', scopes: ['sp2:read'], events: 'own', rateLimit: {} },
    null,
    null
  ])
})

test('a matched key is remembered: the same client again, other keys still checked', (t) => {
  const registry = createClientRegistry([
    { name: 'one', keySha256: hashClientKey('key-one'), scopes: ['customs:read'] },
    { name: 'two', keySha256: hashClientKey('key-two'), scopes: ['sp2:read'] }
  ])
  const one = registry.authenticate('key-one')
  t.equal(one?.name, 'one')
  t.equal(registry.authenticate('key-one'), one, 'the remembered client itself')
  t.equal(registry.authenticate('key-one '), null, 'a near miss is no hit')
  t.equal(registry.authenticate('key-two')?.name, 'two')
  t.equal(registry.authenticate('key-three'), null)
  t.equal(registry.authenticate('key-three'), null, 'an unknown key stays unknown')
  t.end()
})

function configFor (env: Record<string, string> = {}): GatewayConfig {
  return resolveConfig({
    UPSTREAM_HUB_URL: 'http://127.0.0.1:9',
    UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_API_KEY: 'k',
    UPSTREAM_ACCESS_TOKEN: 't',
    PLATFORM_ID: 'p',
    LOG_LEVEL: 'silent',
    ...env
  })
}

async function startUpProblems (config: GatewayConfig, sandbox = false): Promise<string[]> {
  try {
    const app = await buildApp({ config, sandbox })
    await app.close()
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  return []
}

test('start-up: an upstream without CLIENTS_FILE is refused with a clear line', async (t) => {
  t.same(await startUpProblems(configFor()), ['CLIENTS_FILE: is required when an upstream is ' +
    'configured (see docs/deployment.md#clients-and-keys)'])
  t.same(await startUpProblems(configFor(), true), [], 'in sandbox mode it may be left out')
})

test('start-up: a bad clients file is refused with one line per problem, naming the entry and ' +
  'the field', async (t) => {
  const good = { name: 'yard-app', keySha256: 'a'.repeat(64), scopes: ['customs:read'] }
  const cases: Array<[string, string, RegExp[]]> = [
    ['missing file', '', [/^CLIENTS_FILE: cannot read .*ENOENT/]],
    ['not JSON', '{nope', [/^CLIENTS_FILE: .* is not valid JSON$/]],
    ['not an array', '{}', [/^CLIENTS_FILE: must be a JSON array/]],
    ['empty', '[]', [/^CLIENTS_FILE: must list at least one client/]],
    [
      'bad fields',
      JSON.stringify([
        good,
        {
          name: 'x y',
          keySha256: 'abc',
          scopes: ['customs:write'],
          rateLimit: { max: 0, timeWindow: 'soon' },
          extra: 1
        }
      ]),
      [
        /^CLIENTS_FILE: entry 2 \("x y"\): unknown field extra$/,
        /^CLIENTS_FILE: entry 2 \("x y"\): name: /,
        /^CLIENTS_FILE: entry 2 \("x y"\): keySha256: /,
        /^CLIENTS_FILE: entry 2 \("x y"\): scopes\.0: .*customs:read, sp2:read/,
        /^CLIENTS_FILE: entry 2 \("x y"\): rateLimit\.max: /,
        /^CLIENTS_FILE: entry 2 \("x y"\): rateLimit\.timeWindow: /
      ]
    ],
    [
      'required fields',
      JSON.stringify([{ name: 'a' }]),
      [
        /^CLIENTS_FILE: entry 1 \("a"\): entry: .*keySha256|^CLIENTS_FILE: entry 1 \("a"\): keySha256/
      ]
    ],
    [
      'duplicates',
      JSON.stringify([good, { ...good, keySha256: 'b'.repeat(64) }, { ...good, name: 'other' }]),
      [
        /^CLIENTS_FILE: entry 2 \("yard-app"\): name: already used by entry 1$/,
        /^CLIENTS_FILE: entry 3 \("other"\): keySha256: the same key as entry 1/
      ]
    ]
  ]
  for (const [name, text, expected] of cases) {
    const file = name === 'missing file' ? '/nonexistent/clients.json' : writeTempFile(t, text)
    const problems = await startUpProblems(configFor({ CLIENTS_FILE: file }))
    for (const pattern of expected) {
      t.ok(
        problems.some((p) => pattern.test(p)),
        `${name}: ${pattern} in ${JSON.stringify(problems)}`
      )
    }
    t.ok(
      problems.every((p) => !p.includes('\n')),
      `${name}: one line each`
    )
    if (name !== 'bad fields' && name !== 'required ' +
      'fields') {
      t.equal(problems.length, expected.length, `${name}: ` +
      `${JSON.stringify(problems)}`)
    }
  }
})

test('start-up: a /v1 route without an access rule cannot be registered', async (t) => {
  const app = Fastify(serverOptions(configFor()))
  t.teardown(() => app.close())
  await app.register(gateway, { config: configFor(), sandbox: true })
  t.throws(
    () => app.get('/v1/customs-new-thing', async () => ({})),
    /GET \/v1\/customs-new-thing has no access rule: declare the scope it needs in its options, config\.scope/
  )
  t.throws(
    () => app.post('/v1/customs/bc20/bills-of-lading', async () => ({})),
    /no access rule/,
    'a POST under a GET-only prefix is not covered'
  )
  t.doesNotThrow(
    () => app.get('/internal/thing', async () => ({})),
    'outside /v1 a route is public'
  )
})

test('the WebSocket takes its key from Authorization or, for browsers, from ' +
  'Sec-WebSocket-Protocol, never from the URL', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const url = `ws://127.0.0.1:${port}/v1/events`

  function attempt (
    target: string,
    protocols?: string[],
    headers?: Record<string, string>
  ): Promise<{ status: number; socket?: WebSocket }> {
    const socket = new WebSocket(target, protocols, { headers })
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve({ status: 101, socket }))
      socket.once('unexpected-response', (_request, response) => {
        resolve({ status: response.statusCode ?? 0 })
        response.resume()
        socket.terminate()
      })
      socket.once('error', reject)
    })
  }

  t.equal((await attempt(url)).status, 401, 'no key')
  t.equal(
    (await attempt(url, undefined, { authorization: 'Bearer nobody' })).status,
    401,
    'unknown key'
  )
  t.equal(
    (await attempt(url, undefined, { authorization: allBut('events:read') })).status,
    403,
    'key without events:read'
  )
  t.equal(
    (await attempt(`${url}?access_token=key-only-events-read`)).status,
    401,
    'key in the query string'
  )
  t.equal(
    (await attempt(url, ['bearer', 'key-all-but-events-read'])).status,
    403,
    'subprotocol key without the scope'
  )
  t.equal((await attempt(url, ['bearer', 'nobody'])).status, 401, 'unknown subprotocol key')

  const byHeader = await attempt(url, undefined, { authorization: only('events:read') })
  t.equal(byHeader.status, 101, 'Authorization header')
  byHeader.socket?.terminate()

  const byProtocol = await attempt(url, ['bearer', 'key-only-events-read'])
  t.equal(byProtocol.status, 101, 'Sec-WebSocket-Protocol: bearer, <key>')
  t.equal(
    byProtocol.socket?.protocol,
    'bearer',
    'the handshake agrees on bearer; the key is not echoed'
  )
  const received = once(byProtocol.socket!, 'message')
  const booked = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true },
    headers: { authorization: only('bookings:write') }
  })
  t.equal(booked.statusCode, 200)
  t.equal(
    JSON.parse(String((await received)[0])).type,
    'booking.booked',
    'the authenticated socket receives events'
  )
  byProtocol.socket?.terminate()
})

test('a subprotocol key counts on a real upgrade only: a plain GET carrying Upgrade: websocket ' +
  'is a plain GET', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  const protocol = (key: string) => ({
    upgrade: 'websocket',
    'sec-websocket-protocol': `bearer, ${key}`
  })
  // Without Connection: upgrade, Node serves the request as a plain GET: the key there is not a
  // credential.
  const events = await app.inject({ url: '/v1/events', headers: protocol('key-only-events-read') })
  t.equal(events.statusCode, 401, 'the event route: not authenticated')
  const lookup = await app.inject({
    url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
    headers: protocol(allBut('events:read').slice('Bearer '.length))
  })
  t.equal(lookup.statusCode, 401, 'a lookup: not authenticated')
  for (const connection of ['keep-alive', 'close', 'upgraded']) {
    t.equal(
      (
        await app.inject({
          url: '/v1/events',
          headers: { ...protocol('key-only-events-read'), connection }
        })
      ).statusCode,
      401,
      `Connection: ${connection}`
    )
  }
  // With it (as a real handshake sends it), the key counts: here, a handshake inject cannot finish.
  for (const connection of ['Upgrade', 'keep-alive, Upgrade']) {
    t.equal(
      (
        await app.inject({
          url: '/v1/events',
          headers: { ...protocol('key-only-events-read'), connection }
        })
      ).statusCode,
      426,
      `Connection: ${connection}`
    )
  }
})
