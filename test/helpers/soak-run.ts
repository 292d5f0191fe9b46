// Run by test/app/soak.test.ts in a process of its own, with --expose-gc (and by
// hand for a longer soak: `node --expose-gc --import tsx test/helpers/soak-run.ts 200000`).
// A fixed number of requests, valid and hostile mixed, against the real
// gateway listening on loopback, with the sandbox in another process; memory
// is sampled after full collections. Prints one JSON line.
import { connect } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import WebSocket from 'ws'
import { buildApp } from '../../src/app.ts'
import { hashClientKey } from '../../src/auth/keys.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { sandboxEnv } from '../../src/sandbox/index.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { measureMemory, startSandboxProcess } from './memory-runs.ts'

const REQUESTS = Number(process.argv[2] ?? 20_000)
const CACHE_MAX_BYTES = 4 * 1024 * 1024
const IDEMPOTENCY_MAX_ENTRIES = 500

/** A small seeded PRNG (mulberry32): the same mix on every run. */
function prng (seed: number): () => number {
  return () => {
    seed = (seed + 0x6D2B79F5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

// --- the gateway and its sandbox --------------------------------------------------------

const sandbox = await startSandboxProcess()

const KEYS = { reader: 'soak-reader-key', writer: 'soak-writer-key', monitor: 'soak-monitor-key' }
const dir = mkdtempSync(join(tmpdir(), 'gateway-soak-'))
const clientsFile = join(dir, 'clients.json')
writeFileSync(
  clientsFile,
  JSON.stringify([
    {
      name: 'reader',
      keySha256: hashClientKey(KEYS.reader),
      scopes: ['customs:read', 'sp2:read'],
      rateLimit: { max: 1_000_000 }
    },
    {
      name: 'writer',
      keySha256: hashClientKey(KEYS.writer),
      scopes: ['bookings:write', 'sp2:finalize', 'events:read', 'customs:read'],
      rateLimit: { max: 1_000_000 }
    },
    {
      name: 'monitor',
      keySha256: hashClientKey(KEYS.monitor),
      scopes: ['events:read'],
      events: 'all'
    }
  ])
)

const config = resolveConfig({
  ...sandboxEnv(sandbox.url),
  CLIENTS_FILE: clientsFile,
  CACHE_TTL_SECONDS: '600',
  CACHE_STALE_IF_ERROR_SECONDS: '600',
  CACHE_MAX_BYTES: String(CACHE_MAX_BYTES),
  IDEMPOTENCY_MAX_ENTRIES: String(IDEMPOTENCY_MAX_ENTRIES),
  UPSTREAM_DEADLINE_MS: '1000',
  EVENTS_MAX_PER_CLIENT: '4',
  EVENTS_PING_INTERVAL_MS: '250',
  EVENTS_MAX_BUFFERED_BYTES: String(64 * 1024),
  RATE_LIMIT_MAX: '1000000',
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
})
// Warnings are counted, errors kept: the run's own bookkeeping must not grow the heap it measures.
const logged = { warn: 0, errors: [] as string[] }
// Short hub timeouts and retry delays: the soak's faults come and go quickly.
const profile = {
  name: 'soak',
  defaults: { timeouts: { headersMs: 500 } },
  retries: { baseMs: 5, maxMs: 20 }
}
const app = await buildApp({ config, sandbox: true, profile }, {
  level: 'warn',
  stream: {
    write: (text: string) => {
      for (const line of text.split('\n')) {
        if (line === '') continue
        const { level, msg } = JSON.parse(line) as { level: number, msg: string }
        if (level >= 50) logged.errors.push(msg)
        else logged.warn++
      }
    }
  }
})
await app.listen({ port: 0, host: '127.0.0.1' })
const { port } = app.server.address() as { port: number }
const base = `127.0.0.1:${port}`
const pool = new Pool(`http://${base}`, { connections: 16 })

// --- the traffic ----------------------------------------------------------------------

const random = prng(14)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
const auth = (key: string) => ({ authorization: `Bearer ${key}` })
const json = { 'content-type': 'application/json' }
const offer = { serviceOrderId: 'SO-1', price: 10.5, offeredAt: '2024-03-01T08:15:00+07:00' }
let distinct = 0

interface Call {
  name: string
  method?: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
}

/**
 * One request of the mix; about a third valid lookups, a fifth writes, the rest hostile or failing.
 */
function nextCall (): Call {
  const r = random()
  const npwp = String(100_000_000_000_000 + (distinct++))
  if (r < 0.2) {
    return {
      name: 'distinct lookup',
      path: `/v1/customs/bc20/bills-of-lading?npwp=${npwp}`,
      headers: auth(KEYS.reader)
    }
  }
  if (r < 0.3) {
    return {
      name: 'cached lookup',
      path: pick([
        `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
        `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading`,
        `/v1/sp2/documents?npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}`
      ]),
      headers: auth(KEYS.reader)
    }
  }
  if (r < 0.35) {
    return {
      name: 'no-cache lookup',
      path: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}`,
      headers: { ...auth(KEYS.reader), 'cache-control': 'no-cache' }
    }
  }
  if (r < 0.42) {
    return {
      name: 'failing lookup',
      path: '/v1/customs/bc261/containers?blNo=' + pick([
        'SBX-503', 'SBX-500', 'SBX-RESET', 'SBX-MALFORMED',
        'SBX-HANG', 'SBX-429', 'SBX-404', 'SBX-401'
      ]),
      headers: { ...auth(KEYS.reader), ...(random() < 0.5 ? { 'cache-control': 'no-cache' } : {}) }
    }
  }
  if (r < 0.5) {
    return {
      name: 'booked',
      method: 'POST',
      path: `/v1/bookings/${pick(['BKG-20240301-0001', 'BKG-20240301-0002', 'SBX-503'])}/booked`,
      headers: {
        ...auth(KEYS.writer),
        ...json,
        'idempotency-key': `soak-${Math.floor(random() * 2000)}`
      },
      body: JSON.stringify({ booked: true, note: 'soak' })
    }
  }
  if (r < 0.55) {
    return {
      name: 'offer',
      method: 'POST',
      path: `/v1/bookings/${F.bookingRequestId}/offers`,
      headers: { ...auth(KEYS.writer), ...json },
      body: JSON.stringify(offer)
    }
  }
  if (r < 0.6) {
    return {
      name: 'bad parameter',
      path: pick([
        '/v1/customs/bc20/bills-of-lading?npwp=123',
        '/v1/customs/bc28/containers?blNo=../../etc/passwd',
        '/v1/customs/bc25/containers?blDate=0000-01-01',
        `/v1/customs/bc20/bills-of-lading?npwp=${npwp}&extra=1`
      ]),
      headers: auth(KEYS.reader)
    }
  }
  if (r < 0.64) {
    return {
      name: 'deep body',
      method: 'POST',
      path: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`,
      headers: { ...auth(KEYS.writer), ...json, 'idempotency-key': `deep-${distinct}` },
      body: '['.repeat(5000) + ']'.repeat(5000)
    }
  }
  if (r < 0.67) {
    return {
      name: 'large body',
      method: 'POST',
      path: `/v1/bookings/${F.bookingRequestId}/booked`,
      headers: { ...auth(KEYS.writer), ...json },
      body: JSON.stringify({ booked: true, note: 'x'.repeat(70_000) })
    }
  }
  if (r < 0.7) {
    return {
      name: 'not JSON',
      method: 'POST',
      path: `/v1/bookings/${F.bookingRequestId}/booked`,
      headers: { ...auth(KEYS.writer), 'content-type': 'text/plain' },
      body: 'booked'
    }
  }
  if (r < 0.76) {
    return {
      name: 'bad key',
      path: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}&access_token=cgw_${npwp}`,
      headers: pick([{}, auth('nobody'), auth(`${KEYS.reader}x`)])
    }
  }
  if (r < 0.8) {
    return {
      name: 'wrong scope',
      method: 'POST',
      path: `/v1/bookings/${F.bookingRequestId}/booked`,
      headers: { ...auth(KEYS.reader), ...json },
      body: '{"booked":true}'
    }
  }
  if (r < 0.86) {
    return {
      name: 'unknown route',
      method: pick(['GET', 'POST'] as const),
      path: '/' +
        pick(['admin', 'v1/customs/../../etc', '.env', 'v2/x', 'v1/customs/bc99/containers']) +
        `/${npwp}`
    }
  }
  if (r < 0.9) {
    return {
      name: 'plain events GET',
      path: '/v1/events',
      headers: pick([auth(KEYS.monitor), { 'sec-websocket-protocol': `bearer, ${KEYS.monitor}` }])
    }
  }
  return {
    name: 'health and docs',
    path: pick(['/health/ready', '/health/live', '/metrics', '/openapi.json'])
  }
}

const statuses = new Map<string, number>()
const unexpected: string[] = []
/** 5xx answers docs/api.md#the-envelope-and-errors documents: the hub's trouble, load shedding. */
const DOCUMENTED_5XX = new Set([
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_BAD_RESPONSE',
  'UPSTREAM_AUTH_FAILED',
  'OVERLOADED'
])

async function send (call: Call): Promise<void> {
  const res = await pool.request({
    method: call.method ?? 'GET',
    path: call.path,
    headers: call.headers ?? {},
    body: call.body ?? null
  })
  const text = await res.body.text()
  let code = ''
  if (res.statusCode >= 400) {
    try {
      code = (JSON.parse(text) as { code?: string }).code ?? ''
    } catch {
      unexpected.push(`${call.name}: ${res.statusCode} not in the envelope`)
    }
  }
  const key = `${res.statusCode}${code === '' ? '' : ` ${code}`}`
  statuses.set(key, (statuses.get(key) ?? 0) + 1)
  if (res.statusCode >= 500 && !DOCUMENTED_5XX.has(code)) unexpected.push(`${call.name}: ${key}`)
}

const sockets = { opened: 0, refused: 0 }

/**
 * Connection-level abuse beside the requests, for one step: event sockets
 * (more than a client may hold; some never read, some never answer pings)
 * and a half-sent request. Returns the end of the step.
 */
async function sideTraffic (round: number): Promise<() => void> {
  // Five for the writer, one past its cap of four, and one for the monitor.
  const opened = await Promise.all(
    Array.from(
      { length: 6 },
      (_, i) =>
        new Promise<WebSocket | undefined>((resolve) => {
          const socket = new WebSocket(`ws://${base}/v1/events`, {
            headers: auth(i < 5 ? KEYS.writer : KEYS.monitor),
            autoPong: random() < 0.7
          })
          socket.once('open', () => {
            sockets.opened++
            resolve(socket)
          })
          socket.once('unexpected-response', (_req, res) => {
            sockets.refused++
            res.resume()
            resolve(undefined)
          })
          socket.once('error', () => resolve(undefined))
          socket.on('error', () => {})
        })
    )
  )
  for (const socket of opened) if (socket !== undefined && random() < 0.3) socket.pause()
  const raw = connect(port, '127.0.0.1')
  raw.on('error', () => {})
  raw.write(`GET /health/live HTTP/1.1\r\nHost: soak-${round}\r\n`)
  return () => {
    raw.destroy()
    for (const socket of opened) socket?.terminate()
  }
}

// --- the run ----------------------------------------------------------------------------

async function run (count: number): Promise<void> {
  let done = 0
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (done < count) {
      done++
      await send(nextCall())
    }
  }))
}

await run(1000) // warm-up: JIT, pools, the sandbox's record
const start = await measureMemory()
const samples: Array<{ requests: number, heap: number, rss: number }> = [{ requests: 0, ...start }]
const started = Date.now()
const steps = 5
for (let step = 1; step <= steps; step++) {
  const endStep = await sideTraffic(step)
  // The booked POSTs of the mix send events to the step's sockets, the paused ones included.
  await run(Math.round(REQUESTS / steps))
  endStep()
  samples.push({ requests: Math.round((REQUESTS / steps) * step), ...(await measureMemory()) })
}
const seconds = (Date.now() - started) / 1000
const end = await measureMemory() // its pause also lets the gateway see the last sockets go
const cache = app.hub.cacheUsage()
const eventSockets = app.events.size
await pool.close()
await app.close()
sandbox.stop()
rmSync(dir, { recursive: true, force: true })

process.stdout.write(JSON.stringify({
  requests: REQUESTS,
  seconds,
  start,
  end,
  samples,
  cache,
  cacheMaxBytes: CACHE_MAX_BYTES,
  idempotencyMaxEntries: IDEMPOTENCY_MAX_ENTRIES,
  statuses: Object.fromEntries([...statuses].sort()),
  unexpected: unexpected.slice(0, 20),
  warnLines: logged.warn,
  errorLines: logged.errors.slice(0, 20),
  sockets,
  eventSocketsLeft: eventSockets
}) + '\n')
