import { spawn } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { request } from 'undici'
import { ConfigError } from '../../src/config/load.ts'
import { tracingSettings } from '../../src/config/tracing.ts'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES as F,
  SANDBOX_PLATFORM_ID,
  startSandbox,
  type Sandbox
} from '../../src/sandbox/index.ts'
import { profileFromSettings } from '../../src/profile/from-settings.ts'
import {
  mergeProfile, writeClientsFile, writeProfileFile, type ProfilePatch, type TestClient
} from '../helpers/helper.ts'

// The real process (src/server.ts) with the standard OTEL_* variables, a real
// sandbox hub, and an OTLP/HTTP receiver on loopback that keeps what the
// SDK sends: the spans are read as a tracing backend would read them.

interface TestLike { teardown (fn: () => unknown): void }

/** The server processes write their coverage where this one does (c8). */
const COVERAGE: Record<string, string> =
  process.env.NODE_V8_COVERAGE === undefined
    ? {}
    : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }

const CLIENT: TestClient = {
  name: 'yard-app',
  key: 'cgw_TRACINGtestKEYtracingTESTkeyTRACINGtest12',
  scopes: ['customs:read', 'sp2:read', 'bookings:write']
}
const SERVICE_ORDER = 'SO-TRACE-SECRET-77'
const NOTE = 'gate 4 after lunch, secret-note'

interface Receiver {
  url: string
  bodies: Array<{ type: string, body: Buffer }>
  /** Emits `export` as each export arrives. */
  events: EventEmitter
}

async function otlpReceiver (t: TestLike): Promise<Receiver> {
  const bodies: Receiver['bodies'] = []
  const events = new EventEmitter()
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        bodies.push({ type: String(req.headers['content-type']), body: Buffer.concat(chunks) })
        events.emit('export')
      }
      res
        .writeHead(200, {
          'content-type': String(req.headers['content-type'] ?? 'application/json')
        })
        .end(req.headers['content-type'] === 'application/json' ? '{}' : '')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, events }
}

interface Started {
  base: string
  metrics: string | undefined
  logs: Array<Record<string, unknown>>
  stop(): Promise<void>
}

async function startServer (
  t: TestLike,
  sandbox: Sandbox,
  env: Record<string, string>,
  profile: ProfilePatch = {}
): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...COVERAGE,
      PORT: '0',
      HOST: '127.0.0.1',
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      UPSTREAM_HUB_URL: sandbox.url,
      UPSTREAM_BASE_URL: sandbox.url,
      UPSTREAM_API_KEY: SANDBOX_API_KEY,
      UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
      PLATFORM_ID: SANDBOX_PLATFORM_ID,
      CLIENTS_FILE: writeClientsFile(t, [CLIENT]),
      CACHE_TTL_SECONDS: '0',
      CACHE_STALE_IF_ERROR_SECONDS: '0',
      CACHE_FAILURE_SECONDS: '0',
      // Retries a millisecond apart.
      UPSTREAM_PROFILE_FILE: writeProfileFile(t,
        mergeProfile({ name: 'tracing', retries: { baseMs: 1 } }, profile)),
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const logs: Array<Record<string, unknown>> = []
  let base: string | undefined
  let metrics: string | undefined
  const lines = createInterface({ input: child.stdout })
  lines.on('line', line => logs.push(JSON.parse(line) as Record<string, unknown>))
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string, docs?: string, metrics?: string }
    if (entry.metrics !== undefined) metrics = entry.metrics
    if (entry.docs !== undefined) base = entry.docs.replace(/\/docs$/, '')
    if (
      entry.msg?.startsWith('tracing') === true ||
      (base !== undefined && env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined)
    ) { break }
  }
  if (base === undefined) throw new Error('the server did not start')
  return {
    base,
    metrics,
    logs,
    async stop () {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  }
}

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Array<{ key: string, value: Record<string, unknown> }>
}

/** Every span of every OTLP/JSON export received, with its attributes as a plain object. */
function spansOf (receiver: Receiver): Array<OtlpSpan & { attrs: Record<string, unknown> }> {
  return receiver.bodies
    .flatMap(({ body }) => {
      const parsed = JSON.parse(body.toString('utf8')) as {
        resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>
      }
      return parsed.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
    })
    .map((span) => ({
      ...span,
      attrs: Object.fromEntries(
        span.attributes.map(({ key, value }) => [key, Object.values(value)[0]])
      )
    }))
}

/** Longest wait for an export: a guard against "never", not a judgement of the exporter's speed. */
const EXPORT_GUARD_MS = 120_000

/** Resolves once `check()` holds, checked as each export arrives. */
async function until (receiver: Receiver, check: () => boolean, what: string): Promise<void> {
  if (check()) return
  await new Promise<void>((resolve, reject) => {
    const arrived = () => {
      if (!check()) return
      clearTimeout(guard)
      receiver.events.off('export', arrived)
      resolve()
    }
    const guard = setTimeout(() => {
      receiver.events.off('export', arrived)
      reject(new Error(`no ${what} within ${EXPORT_GUARD_MS / 1000} s`))
    }, EXPORT_GUARD_MS)
    receiver.events.on('export', arrived)
  })
}

const auth = { authorization: `Bearer ${CLIENT.key}` }
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c'
const CALLER_SPAN = 'b7ad6b7169203331'

test('spans of a lookup with retries and of a write reach an OTLP/HTTP (JSON) receiver, linked ' +
  'and without secrets', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const receiver = await otlpReceiver(t)
  const server = await startServer(t, sandbox, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    // debug: the `incoming request` line too, which is written once the span exists.
    LOG_LEVEL: 'debug'
  })

  // A lookup continuing the caller's trace; one the hub fails (503, retried twice); a write.
  const lookup = await request(`${server.base}/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading`, {
    headers: { ...auth, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }
  })
  t.equal(lookup.statusCode, 200)
  await lookup.body.dump()
  const failing = await request(`${server.base}/v1/customs/bc261/containers?blNo=SBX-502`, {
    headers: auth
  })
  t.equal(failing.statusCode, 502)
  await failing.body.dump()
  const write = await request(`${server.base}/v1/bookings/BKG-20240301-0001/booked`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ booked: true, note: NOTE })
  })
  t.equal(write.statusCode, 200)
  await write.body.dump()
  const offer = await request(`${server.base}/v1/bookings/BKG-20240301-0001/offers`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      serviceOrderId: SERVICE_ORDER,
      price: 1250000,
      offeredAt: '2024-03-01T08:15:00+07:00'
    })
  })
  t.equal(offer.statusCode, 200)
  await offer.body.dump()

  const requestSpan = (route: string) =>
    spansOf(receiver).find(
      (s) => s.attrs['http.route'] === route && s.attrs['fastify.root'] === '@fastify/otel'
    )
  await until(
    receiver,
    () => requestSpan('/v1/bookings/:bookingRequestId/offers') !== undefined,
    'span of the offer'
  )
  const spans = spansOf(receiver)

  const resource = JSON.parse(receiver.bodies[0]!.body.toString('utf8')) as {
    resourceSpans: Array<{
      resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }
    }>
  }
  const resourceAttrs = Object.fromEntries(
    resource.resourceSpans[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue])
  )
  t.equal(resourceAttrs['service.name'], 'gateway-under-test', 'OTEL_SERVICE_NAME')
  t.equal(resourceAttrs['deployment.environment.name'], 'test', 'OTEL_RESOURCE_ATTRIBUTES')

  // The request span: the route template as its name, the client, the status; the caller's trace
  // continued.
  const taxpayer = requestSpan('/v1/taxpayers/:npwp/bills-of-lading')!
  t.ok(taxpayer, 'a span for the lookup')
  t.equal(taxpayer.name, 'GET /v1/taxpayers/:npwp/bills-of-lading')
  t.equal(taxpayer.kind, 2, 'SERVER')
  t.equal(taxpayer.traceId, CALLER_TRACE, "the caller's trace goes on")
  t.equal(taxpayer.parentSpanId, CALLER_SPAN, "under the caller's span")
  t.equal(taxpayer.attrs['gateway.client'], 'yard-app')
  t.equal(taxpayer.attrs['http.response.status_code'], 200)
  t.equal(
    taxpayer.attrs['url.path'],
    '/v1/taxpayers/:npwp/bills-of-lading',
    'the template, not the address asked'
  )

  // Descendants of a span (children, grandchildren, ...).
  const under = (root: OtlpSpan) => {
    const found: typeof spans = []
    let frontier = [root.spanId]
    while (frontier.length > 0) {
      const next = spans.filter(
        (s) =>
          s.parentSpanId !== undefined &&
          frontier.includes(s.parentSpanId) &&
          s.traceId === root.traceId
      )
      found.push(...next)
      frontier = next.map((s) => s.spanId)
    }
    return found
  }
  const httpCalls = (root: OtlpSpan) => under(root).filter((s) => s.kind === 3)
  t.equal(httpCalls(taxpayer).length, 3, 'one HTTP client span per hub call: the three BL lists')
  t.ok(
    httpCalls(taxpayer).every(
      (s) =>
        s.attrs['http.response.status_code'] === 200 && s.attrs['url.query'] === 'npwp=REDACTED'
    ),
    'hub status; query values redacted'
  )

  // Each hub call is a span with its operation, cache result, circuit state and the hub's status.
  const hubCalls = (root: OtlpSpan) => under(root).filter((s) => /^hub \S+$/.test(s.name))
  t.same(
    hubCalls(taxpayer)
      .map((s) => s.attrs['gateway.hub.operation'])
      .sort(),
    ['noblbc16', 'noblbc20', 'noblbc23']
  )
  t.ok(
    hubCalls(taxpayer).every(
      (s) =>
        s.attrs['gateway.hub.cache'] === 'miss' &&
        s.attrs['gateway.hub.circuit'] === 'closed' &&
        s.attrs['gateway.hub.status_code'] === 200 &&
        s.attrs['gateway.hub.upstream'] === 'hub'
    ),
    'cache, circuit, status, upstream'
  )
  for (const call of hubCalls(taxpayer)) {
    const [attempt] = spans.filter((s) => s.parentSpanId === call.spanId)
    t.equal(attempt?.attrs['gateway.hub.attempt'], 1)
    t.equal(
      spans.find((s) => s.parentSpanId === attempt?.spanId)?.kind,
      3,
      'the HTTP exchange under its attempt'
    )
    t.equal(
      spans.find((s) => s.parentSpanId === attempt?.spanId)?.attrs['url.path'],
      `/V1/HUB/INT/AUTH/${String(call.attrs['gateway.hub.operation'])}/`,
      "the operation's address"
    )
  }

  const retried = requestSpan('/v1/customs/bc261/containers')!
  t.equal(retried.attrs['http.response.status_code'], 502)
  const attempts = httpCalls(retried)
  t.equal(attempts.length, 3, 'the call and its two retries, each its own span')
  t.ok(
    attempts.every((s) => s.attrs['http.response.status_code'] === 502),
    "the hub's status on each"
  )
  const [failedCall] = hubCalls(retried)
  t.equal(failedCall?.attrs['gateway.hub.outcome'], 'unavailable')
  t.equal(failedCall?.attrs['gateway.hub.status_code'], 502)
  const attemptSpans = spans.filter((s) => s.parentSpanId === failedCall?.spanId)
  t.same(
    attemptSpans.map((s) => s.attrs['gateway.hub.attempt']).sort(),
    [1, 2, 3],
    'attempts 1 to 3, each a span'
  )
  t.ok(
    attemptSpans.every(
      (s) =>
        s.attrs['gateway.hub.status_code'] === 502 &&
        spans.some((h) => h.parentSpanId === s.spanId && h.kind === 3)
    ),
    "each with the hub's status and its HTTP exchange"
  )

  const booked = requestSpan('/v1/bookings/:bookingRequestId/booked')!
  t.equal(booked.attrs['http.response.status_code'], 200)
  t.equal(httpCalls(booked).length, 1, 'the write: one hub call, never retried')
  t.equal(httpCalls(booked)[0]!.attrs['http.request.method'], 'POST')
  t.equal(hubCalls(booked)[0]?.attrs['gateway.hub.operation'], 'DetilBooking/isBooked')
  t.equal(hubCalls(booked)[0]?.attrs['gateway.hub.cache'], undefined, 'a write has no cache result')
  t.equal(httpCalls(booked)[0]!.attrs['url.query'], 'idRequestBooking=REDACTED')

  // Logs and traces join: the request's lines carry its trace and span ids.
  const lines = server.logs.filter(
    (l) => l.traceId === taxpayer.traceId && l.spanId === taxpayer.spanId
  )
  t.ok(
    lines.some((l) => l.msg === 'incoming request') &&
      lines.some((l) => l.msg === 'request completed'),
    'the first and last line of the request carry its ids'
  )

  // Tracing off for the hub: no traceparent crossed (UPSTREAM_TRACE_PROPAGATION unset).
  t.ok(sandbox.requests.length > 0)
  t.ok(
    sandbox.requests.every(
      (r) => r.headers.traceparent === undefined && r.headers.tracestate === undefined
    ),
    'the hub received no trace context'
  )

  // Nothing secret in any exported byte: hub key and token, client key, NPWP, body values.
  const exported = receiver.bodies.map((b) => b.body.toString('utf8')).join('\n')
  for (const [what, secret] of Object.entries({
    'API key': SANDBOX_API_KEY,
    token: SANDBOX_ACCESS_TOKEN,
    'client key': CLIENT.key,
    NPWP: F.taxpayer.npwp,
    'BL number': 'SBX-502',
    'booking id': 'BKG-20240301-0001',
    'service order': SERVICE_ORDER,
    note: NOTE,
    price: '1250000'
  })) {
    t.notOk(exported.includes(secret), `no ${what} in the exported spans`)
  }
  await server.stop()
})

test('with UPSTREAM_TRACE_PROPAGATION the hub receives traceparent of the hub call; ' +
  'http/protobuf is sent as protobuf', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const receiver = await otlpReceiver(t)
  const server = await startServer(
    t,
    sandbox,
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      UPSTREAM_TRACE_PROPAGATION: 'true',
      METRICS_PORT: '0'
    },
    {
      // Values as path segments: the HTTP span's address must still not hold them.
      operations: profileFromSettings({ UPSTREAM_PARAM_PLACEMENT: 'path' }, undefined).profile
        ?.operations
    }
  )
  const lookup = await request(
    `${server.base}/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
    { headers: { ...auth, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } }
  )
  t.equal(lookup.statusCode, 200)
  await lookup.body.dump()
  const received = sandbox.requests.find((r) => r.operation === 'noblbc20')
  t.match(
    received?.headers.traceparent,
    new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`),
    "the caller's trace, reaching the hub"
  )
  t.not(
    String(received?.headers.traceparent).split('-')[2],
    CALLER_SPAN,
    "under the gateway's own span of the call"
  )

  // Spans are exported in batches as they end: the hub call's may come in an export of its own.
  const exported = () => Buffer.concat(receiver.bodies.map((b) => b.body))
  await until(
    receiver,
    () => exported().includes('GET /v1/customs/bc20/bills-of-lading'),
    'request span, by its route,'
  )
  await until(
    receiver,
    () => exported().includes('/V1/HUB/INT/AUTH/noblbc20/{npwp}'),
    'hub call span with its address template'
  )
  t.ok(
    receiver.bodies.every((b) => b.type === 'application/x-protobuf'),
    'protobuf'
  )
  t.notOk(
    exported().includes(F.taxpayer.npwp),
    'no NPWP, though it was a path segment of the hub address'
  )

  // METRICS_PORT: /metrics on its own listener, not on the API's.
  t.ok(server.metrics, 'the metrics address is logged')
  const metrics = await request(server.metrics!)
  t.equal(metrics.statusCode, 200)
  t.match(
    await metrics.body.text(),
    /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc20\/bills-of-lading",status_code="200"\} 1/
  )
  const onApi = await request(`${server.base}/metrics`)
  t.equal(onApi.statusCode, 404, 'not on the API port')
  await onApi.body.dump()
  await server.stop()
})

/**
 * Every module a process started as server.ts starts resolves, recorded from
 * inside that process (a module resolution hook), with these settings.
 */
async function loadedModules (t: TestLike, env: Record<string, string>): Promise<string[]> {
  // A file, not stdout, which the server's log lines share.
  const dir = mkdtempSync(join(tmpdir(), 'gateway-modules-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'loaded.json')
  const script = [
    "const { registerHooks } = await import('node:module')",
    "const { writeFileSync } = await import('node:fs')",
    'const loaded = new Set()',
    'registerHooks({ resolve (specifier, context, next) { const found = next(specifier, ' +
    'context); loaded.add(found.url); return found } })',
    "process.env.PORT = '0'; process.env.HOST = '127.0.0.1'",
    "await import('./src/server.ts')",
    "await fetch('http://127.0.0.1:' + 0).catch(() => {})",
    `writeFileSync(${JSON.stringify(file)}, JSON.stringify([...loaded]))`,
    'process.exit(0)'
  ].join('\n')
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: {
      PATH: process.env.PATH ?? '',
      ...COVERAGE,
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`the server process exited with ${code}`)
  return JSON.parse(readFileSync(file, 'utf8')) as string[]
}

test('without OTEL_* settings no part of the SDK is loaded, and without REDIS_URL no Redis ' +
  'client', async (t) => {
  const loaded = await loadedModules(t, {})
  t.ok(loaded.length > 100, `the gateway's modules were seen (${loaded.length})`)
  t.same(
    loaded.filter((url) => /@opentelemetry\/(?!api\/)|@fastify\/otel/.test(url)),
    [],
    'no module of the OpenTelemetry SDK or its instrumentations'
  )
  // ioredis and its command table are 1-2 MB of heap (state/index.ts loads them only with
  // REDIS_URL).
  t.same(
    loaded.filter((url) => /ioredis|state\/redis\//.test(url)),
    [],
    'no module of ioredis or of the Redis state'
  )
})

test('in front of a hub, neither the sandbox nor its seeded data is loaded', async (t) => {
  const hub = {
    UPSTREAM_HUB_URL: 'http://127.0.0.1:9',
    UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_API_KEY: 'k',
    UPSTREAM_ACCESS_TOKEN: 't',
    PLATFORM_ID: 'p',
    CLIENTS_FILE: writeClientsFile(t, [CLIENT])
  }
  const sandboxModules = (loaded: string[]) => loaded.filter(url => /\/src\/sandbox\//.test(url))
  const onHub = await loadedModules(t, hub)
  t.ok(onHub.length > 100, `the gateway's modules were seen (${onHub.length})`)
  t.same(sandboxModules(onHub), [], 'no module of src/sandbox/')
  // The same filter finds them when the sandbox is used.
  t.ok(
    sandboxModules(await loadedModules(t, {})).some((url) => url.endsWith('/src/sandbox/data.ts')),
    'the sandbox mode loads them (seeded data included)'
  )
})

test('OTEL_* decide whether tracing is on; values the SDK would replace by a default stop ' +
  'start-up', async (t) => {
  const on = (env: Record<string, string>) => tracingSettings(env).enabled
  t.equal(on({}), false, 'nothing set: off')
  t.equal(
    on({ OTEL_SERVICE_NAME: 'x', OTEL_RESOURCE_ATTRIBUTES: 'a=b' }),
    false,
    'naming the service alone exports nothing'
  )
  t.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  t.equal(on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  t.equal(on({ OTEL_TRACES_EXPORTER: 'console' }), true)
  t.equal(
    on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }),
    false
  )
  t.equal(
    on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
    false
  )
  const problems = (env: Record<string, string>) => {
    try {
      tracingSettings(env)
      return []
    } catch (error) {
      if (error instanceof ConfigError) return error.problems
      throw error
    }
  }
  t.same(problems({ OTEL_TRACES_EXPORTER: 'jaeger' }), [
    'OTEL_TRACES_EXPORTER: jaeger is not supported: otlp, console, none'
  ])
  t.same(problems({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }), [
    'OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http/protobuf, http/json, grpc'
  ])
  t.same(problems({ OTEL_TRACES_SAMPLER: 'sometimes' }), [
    'OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio, ' +
    'parentbased_always_on, parentbased_always_off, parentbased_traceidratio'
  ])
  t.same(problems({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '10' }), [
    'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (the share of traces kept)'
  ])
  t.same(problems({ OTEL_SDK_DISABLED: 'yes' }), ['OTEL_SDK_DISABLED: must be true or false'])
})
