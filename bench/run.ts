// `npm run bench`: the gateway against a hand-made @fastify/reply-from proxy
// and minimal reference servers, all in front of the same minimal upstream,
// in interleaved rounds; each server under test pinned to a CPU of its own
// and measured by its CPU time per answered request.
// Writes docs/reports/benchmarks.md (or --out) and prints it. See USAGE in options.ts.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, release, tmpdir, totalmem, type as osType, arch } from 'node:os'
import { dirname, isAbsolute, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from '../src/sandbox/index.ts'
import { API_KEY_HEADER, BL_LIST_SIZE, prepareBodies, type Bodies } from './bodies.ts'
import { CONTAINER_CASES, containerSetup } from './container.ts'
import { runLoad, type LoadResult } from './load.ts'
import { parseOptions, USAGE, type BenchOptions, type CaseName, type ModeName } from './options.ts'
import { checkPinning, pinProcess, planPinning, type Pinning } from './pinning.ts'
import { clockTicks, environmentOf, freePort, memoryOf, meterCpu, sampleMemory, spawnChild, stopAll, stopChild, waitIdle, waitReady, warningsSince, type Child } from './processes.ts'
import { summarizeProfile } from './profile.ts'
import { startRedis, type BenchRedis } from './redis.ts'
import { measureTranscoder } from './transcode-speed.ts'
import { renderStages, runStages } from './stages/run-stages.ts'
import {
  cpuRatioOf,
  problemsOf,
  renderReport,
  renderTargetsText,
  runLength,
  type CacheStatus,
  type CaseInfo,
  type Measurement,
  type Pair,
  type PairKind,
  type PinningReport,
  type ReportInput
} from './report.ts'
import { CACHED_REFERENCES, RAW_READY_PATH, REFERENCE_MODES, UNCACHED_REFERENCES, UPSTREAM_READY_PATH, type RawProxyConfig, type ReferenceMode, type ReferenceServerConfig, type UpstreamConfig } from './shared.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const HOST = '127.0.0.1'
const GATEWAY_READY_PATH = '/health/ready'
/** How long a gateway may take to start (as the stage variants may). */
const GATEWAY_START_MS = 120_000

/** The bench's client of the gateway (CLIENTS_FILE); its key goes as a bearer token to every target. */
const CLIENT_KEY = 'bench-client-key-0d5c1e7a9b3f4862'
const CLIENT_HEADERS = { authorization: `Bearer ${CLIENT_KEY}` }
/** The highest rate limit the gateway accepts: the limiter runs but never refuses at bench rates. */
const BENCH_RATE_LIMIT = 1_000_000

async function writeClientsFile (dir: string): Promise<string> {
  const file = join(dir, 'clients.json')
  await writeFile(file, JSON.stringify([{
    name: 'bench',
    keySha256: createHash('sha256').update(CLIENT_KEY).digest('hex'),
    scopes: ['customs:read', 'sp2:read'],
    rateLimit: { max: BENCH_RATE_LIMIT, timeWindow: '1 minute' }
  }], null, 2))
  return file
}

/** The gateways' hub profile, by their clients file: the documented hub, --upstream-connections. */
function profileFileFor (clientsFile: string): string {
  return join(dirname(clientsFile), 'hub-profile.json')
}

async function writeProfileFile (clientsFile: string, options: BenchOptions): Promise<void> {
  const profile = { name: 'bench', connections: { max: options.upstreamConnections } }
  await writeFile(profileFileFor(clientsFile), JSON.stringify(profile, null, 2))
}

function log (message: string): void {
  process.stderr.write(`[bench] ${message}\n`)
}

function commandLine (argv: string[]): string {
  const quoted = argv.map(a => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  if (process.env.npm_lifecycle_event === 'bench') return `npm run bench${quoted !== '' ? ` -- ${quoted}` : ''}`
  return `npx tsx bench/run.ts${quoted !== '' ? ` ${quoted}` : ''}`
}

/** Children get a clean environment: no test-runner loaders or coverage hooks. */
function childEnv (extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === 'NODE_OPTIONS' || k === 'NODE_V8_COVERAGE' || k.startsWith('TAP') || k.startsWith('_TAPJS')) continue
    env[k] = v
  }
  return { ...env, ...extra }
}

interface Case extends CaseInfo {
  expectedCount: number
  gatewayPathFor: (npwp: string) => string
  rawPathFor: (npwp: string) => string
}

/** How many distinct NPWPs the bench has asked for so far, across every run. */
let distinctSent = 0

/**
 * A distinct, well-formed NPWP per request (15 digits, a prefix no seeded
 * taxpayer uses), never the same twice in the whole bench. The upstream
 * answers the same body whatever the NPWP, so every request is a distinct
 * lookup: neither the gateway's cache (on, with its default lifetime, in
 * the uncached gateway) nor its coalescing of identical concurrent lookups
 * can answer it.
 */
function distinctPaths (pathFor: (npwp: string) => string): () => string {
  return () => pathFor(`097${String(distinctSent++ % 1e12).padStart(12, '0')}`)
}

function casesFrom (bodies: Bodies, names: CaseName[]): Case[] {
  const { twenty, fiveHundred } = bodies.sp2
  const sp2Case = (name: CaseName, t: typeof twenty): Case => {
    const query = (npwp: string): string => `npwp=${npwp}&blNo=${t.blNo}&blDate=${t.blDate}`
    return {
      name,
      label: `SP2 list, ${t.documents} documents`,
      upstreamBytes: t.bytes,
      gatewayBytes: 0,
      items: t.documents,
      expectedCount: t.documents,
      gatewayPath: `/v1/sp2/documents?${query(t.npwp)}`,
      rawPath: `/raw/sp2?${query(t.npwp)}`,
      gatewayPathFor: (npwp) => `/v1/sp2/documents?${query(npwp)}`,
      rawPathFor: (npwp) => `/raw/sp2?${query(npwp)}`
    }
  }
  const all: Case[] = [
    {
      name: 'bl',
      label: `BL list, ${BL_LIST_SIZE} entries`,
      upstreamBytes: bodies.blListBytes,
      gatewayBytes: 0,
      items: BL_LIST_SIZE,
      expectedCount: BL_LIST_SIZE,
      gatewayPath: `/v1/customs/bc20/bills-of-lading?npwp=${bodies.blNpwp}`,
      rawPath: `/raw/bl?npwp=${bodies.blNpwp}`,
      gatewayPathFor: (npwp) => `/v1/customs/bc20/bills-of-lading?npwp=${npwp}`,
      rawPathFor: (npwp) => `/raw/bl?npwp=${npwp}`
    },
    sp2Case('sp2-20', twenty),
    sp2Case('sp2-500', fiveHundred)
  ]
  return all.filter(c => names.includes(c.name))
}

async function getJson (url: string): Promise<{ status: number, bytes: number, body: unknown }> {
  // A guard against a hang, not a judgement of speed: a busy machine is slow to answer the first.
  const res = await fetch(url, { headers: CLIENT_HEADERS, signal: AbortSignal.timeout(60_000) })
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, bytes: Buffer.byteLength(text), body }
}

/** Checks once that every target answers what the case expects, before any load. */
async function verify (cases: Case[], raw: Child, gateway: Child, cached: Child | undefined, references: Child[]): Promise<CacheStatus | undefined> {
  for (const c of cases) {
    for (const reference of references) {
      const path = c.rawPathFor('097999999999999')
      const r = await getJson(reference.url + path)
      const count = (r.body as { meta?: { count?: unknown } } | null)?.meta?.count
      const passedThrough = r.bytes === c.upstreamBytes
      if (r.status !== 200 || (!passedThrough && count !== c.expectedCount)) {
        throw new Error(`${reference.name} answered ${r.status} with ${r.bytes} bytes (meta.count ${String(count)}) to ${path}: ${JSON.stringify(r.body).slice(0, 300)}\n${reference.tail()}`)
      }
    }
    const r = await getJson(raw.url + c.rawPath)
    if (r.status !== 200 || r.bytes !== c.upstreamBytes) {
      throw new Error(`raw proxy answered ${r.status} with ${r.bytes} bytes to ${c.rawPath} (expected 200, ${c.upstreamBytes} bytes): ${JSON.stringify(r.body).slice(0, 300)}`)
    }
    for (const path of [c.gatewayPath, c.gatewayPathFor('097999999999999')]) {
      const g = await getJson(gateway.url + path)
      const count = (g.body as { meta?: { count?: unknown } } | null)?.meta?.count
      if (g.status !== 200 || count !== c.expectedCount) {
        throw new Error(`gateway answered ${g.status} (meta.count ${String(count)}, expected ${c.expectedCount}) to ${path}: ${JSON.stringify(g.body).slice(0, 500)}\n${gateway.tail()}`)
      }
      c.gatewayBytes = g.bytes
    }
    const r2 = await getJson(raw.url + c.rawPathFor('097999999999999'))
    if (r2.status !== 200 || r2.bytes !== c.upstreamBytes) throw new Error(`raw proxy answered ${r2.status} with ${r2.bytes} bytes to a distinct-NPWP request`)
  }
  if (cached === undefined) return undefined
  const hits: string[] = []
  const misses: string[] = []
  let sawField = false
  for (const c of cases) {
    await getJson(cached.url + c.gatewayPath)
    const second = await getJson(cached.url + c.gatewayPath)
    if (second.status !== 200) throw new Error(`cached gateway answered ${second.status} to ${c.gatewayPath}`)
    const meta = (second.body as { meta?: Record<string, unknown> } | null)?.meta ?? {}
    if ('cached' in meta) sawField = true
    if (meta.cached === true) hits.push(c.name)
    else misses.push(c.name)
  }
  if (misses.length === 0) return { available: true, detail: '`meta.cached: true` on the second request of every case' }
  if (!sawField) return { available: false, detail: 'no `meta.cached` in the gateway\'s answers; `CACHE_TTL_SECONDS` has no effect yet' }
  return { available: false, detail: `\`meta.cached\` not true on a repeated request for ${misses.join(', ')}` }
}

/** Checks once that the container gateway answers each of its cases, before any load. */
async function verifyContainer (cases: Case[], container: Child): Promise<void> {
  for (const c of cases.filter(c => CONTAINER_CASES.includes(c.name))) {
    const path = c.gatewayPathFor('097999999999998')
    const g = await getJson(container.url + path)
    const count = (g.body as { meta?: { count?: unknown } } | null)?.meta?.count
    if (g.status !== 200 || count !== c.expectedCount) {
      const body = JSON.stringify(g.body).slice(0, 500)
      throw new Error(`${container.name} answered ${g.status} (meta.count ${String(count)}, ` +
        `expected ${c.expectedCount}) to ${path}: ${body}\n${container.tail()}`)
    }
  }
}

interface Targets {
  raw: Child
  gateway: Child
  cached: Child | undefined
  /** The reference servers, empty with `--no-references`. */
  references: Array<{ mode: ReferenceMode, child: Child }>
  /** The gateway as the Kubernetes manifests run it; undefined with `--no-container`. */
  container: Child | undefined
}

/** Every bench process, for the quiet check between runs. */
const quietPids: number[] = []
/** The load side's processes beside the runner (the upstream, Redis), whose CPU use each run reports. */
const loadPids: number[] = []
/** Whether every process has been idle since the last check (no load in between). */
let settled = false

async function settle (): Promise<void> {
  if (settled) return
  const waited = await waitIdle(quietPids)
  if (waited > 2) log(`waited ${waited.toFixed(1)} s for the processes to finish abandoned requests`)
  settled = true
}

async function measure (target: Child, path: string | (() => string), connections: number, options: BenchOptions): Promise<Measurement> {
  const load = async (durationS: number, amount = 0): Promise<LoadResult> => {
    settled = false
    return await runLoad({
      url: target.url + (typeof path === 'string' ? path : '/'),
      connections,
      durationS,
      amount,
      headers: CLIENT_HEADERS,
      rate: options.rate,
      ...(typeof path === 'string' ? {} : { nextPath: path })
    })
  }
  await settle()
  if (options.warmup > 0) {
    await load(options.warmup)
    await settle()
  }
  const before = new Map(target.warnings)
  const sampler = await sampleMemory(target.pid)
  // From the start of the load to its end: the CPU the server spent on the run's answers.
  const cpu = await meterCpu(target.pid, { loadPids, ownPids: quietPids })
  const result = await load(options.duration, options.requests)
  const { targetSeconds, targetCores, loadCores, otherCores } = await cpu.stop()
  const peakRssMb = await sampler.stop()
  // Lines logged by requests still in flight at the end land in this run too.
  await settle()
  const logged = warningsSince(target, before)
  const overloaded = sheddingSince(target, before)
  const usPerRequest = targetSeconds !== undefined && result.ok > 0 ? targetSeconds / result.ok * 1e6 : undefined
  return {
    ...result,
    peakRssMb,
    cpuSeconds: targetSeconds,
    usPerRequest,
    targetCores,
    loadCores,
    otherCores,
    ...(logged !== undefined ? { logged } : {}),
    ...(overloaded > 0 ? { overloaded } : {})
  }
}

/**
 * The requests the gateway shed (503 OVERLOADED) since `before`: it logs
 * each at warn level as "shedding load" (src/plugins/pressure.ts).
 */
function sheddingSince (child: Child, before: Map<string, number>): number {
  let shed = 0
  for (const [message, n] of child.warnings) {
    if (message.startsWith('shedding load')) shed += n - (before.get(message) ?? 0)
  }
  return shed
}

function describe (m: Measurement): string {
  const problems = problemsOf(m)
  const cpu = m.usPerRequest !== undefined ? `, ${Math.round(m.usPerRequest)} µs/req` : ''
  return `${Math.round(m.rps)} req/s${cpu}, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms${m.peakRssMb !== undefined ? `, RSS ${Math.round(m.peakRssMb)} MB` : ''}${m.targetCores !== undefined ? `, CPU ${m.targetCores.toFixed(2)}` : ''}${m.loadCores !== undefined ? `, load side ${m.loadCores.toFixed(2)}` : ''}${m.otherCores !== undefined ? `, others ${m.otherCores.toFixed(2)} cores` : ''}${problems !== undefined ? ` ⚠ ${problems}` : ''}${m.logged !== undefined ? ` [logged: ${m.logged}]` : ''}`
}

async function runPair (round: number, c: Case, kind: PairKind, connections: number, targets: Targets, options: BenchOptions): Promise<Pair> {
  const gateway = kind === 'cached' ? targets.cached : targets.gateway
  if (gateway === undefined) throw new Error('cached gateway not started')
  const order = round % 2 === 1 ? 'raw first' : 'gateway first'
  // Cached runs repeat the warmed URL; the others ask a distinct lookup each time (unless --same-url).
  const distinct = kind !== 'cached' && !options.sameUrl
  const runRaw = async (): Promise<Measurement> => await measure(targets.raw, distinct ? distinctPaths(c.rawPathFor) : c.rawPath, connections, options)
  const runGateway = async (): Promise<Measurement> => await measure(gateway, distinct ? distinctPaths(c.gatewayPathFor) : c.gatewayPath, connections, options)
  let raw: Measurement
  let gw: Measurement
  if (order === 'raw first') {
    raw = await runRaw()
    gw = await runGateway()
  } else {
    gw = await runGateway()
    raw = await runRaw()
  }
  const pair: Pair = { round, caseName: c.name, kind, connections, order, raw, gateway: gw, ratio: gw.rps / raw.rps, cpuRatio: cpuRatioOf(gw, raw), p99Added: gw.p99 - raw.p99 }
  log(`round ${round} ${c.name} ${kind} @${connections}: raw ${describe(raw)} | gateway ${describe(gw)} | CPU ratio ${pair.cpuRatio.toFixed(2)}, req/s ratio ${pair.ratio.toFixed(2)}`)
  // Right after the pair, so that they see the machine the pair saw; they answer the raw proxy's routes.
  const modes = kind === 'cached' ? CACHED_REFERENCES : UNCACHED_REFERENCES
  const references = targets.references.filter(r => modes.includes(r.mode))
  if (references.length > 0) {
    pair.references = []
    for (const { mode, child } of references) {
      const m = await measure(child, distinct ? distinctPaths(c.rawPathFor) : c.rawPath, connections, options)
      log(`round ${round} ${c.name} ${kind} @${connections}: reference ${mode} ${describe(m)} | CPU ratio to raw ${cpuRatioOf(m, raw).toFixed(2)}, req/s ${(m.rps / raw.rps).toFixed(2)}`)
      pair.references.push({ mode, m })
    }
  }
  if (kind === 'uncached' && targets.container !== undefined && CONTAINER_CASES.includes(c.name)) {
    const paths = distinct ? distinctPaths(c.gatewayPathFor) : c.gatewayPath
    const m = await measure(targets.container, paths, connections, options)
    const ratio = cpuRatioOf(m, gw).toFixed(2)
    log(`round ${round} ${c.name} container @${connections}: ${describe(m)} | ` +
      `CPU ÷ gateway ${ratio}`)
    pair.container = m
  }
  return pair
}

/** `main` is the container's command (it checks the Node version first), `server` the rest. */
function gatewayArgs (
  options: BenchOptions, tsx: string, profileFlags: string[] = [], entry = 'server'
): string[] {
  const nodeFlags = [...options.gatewayFlags, ...profileFlags]
  return options.source
    ? [...nodeFlags, '--import', tsx, join(ROOT, `src/${entry}.ts`)]
    : [...nodeFlags, join(ROOT, `dist/${entry}.js`)]
}

/**
 * The gateway's environment: its default configuration but for what the
 * bench must set (the upstream, the client key, a rate limit it never hits,
 * warn-level logs) and `extra` (the cached gateway's lifetime, REDIS_URL).
 */
function gatewayEnv (port: number, upstreamUrl: string, options: BenchOptions, clientsFile: string, extra: Record<string, string>): Record<string, string> {
  return childEnv({
    CLIENTS_FILE: clientsFile,
    RATE_LIMIT_MAX: String(BENCH_RATE_LIMIT),
    RATE_LIMIT_WINDOW: '1 minute',
    NODE_ENV: 'production',
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'warn',
    UPSTREAM_HUB_URL: upstreamUrl,
    UPSTREAM_BASE_URL: upstreamUrl,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: SANDBOX_PLATFORM_ID,
    // The documented hub, with --upstream-connections per address (connections.max).
    UPSTREAM_PROFILE_FILE: profileFileFor(clientsFile),
    // With one URL repeated, a cache lifetime would answer the uncached runs.
    ...(options.sameUrl ? { CACHE_TTL_SECONDS: '0' } : {}),
    ...extra,
    // One client drives every connection: the bound per client on hub calls in flight would refuse most.
    UPSTREAM_MAX_CALLS_PER_CLIENT: '0',
    ...options.gatewayEnv
  })
}

/** The commit, and how many files under src/ differ from it (others may be editing while the bench runs). */
function describeCode (): string {
  const git = (...args: string[]): string | undefined => {
    const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' })
    return r.status === 0 ? r.stdout.trim() : undefined
  }
  const head = git('rev-parse', '--short', 'HEAD')
  if (head === undefined) return 'not a git checkout'
  const dirty = (git('status', '--porcelain', '--', 'src') ?? '').split('\n').filter(l => l.trim() !== '').length
  return `commit ${head}${dirty > 0 ? ` with uncommitted changes in ${dirty} file${dirty === 1 ? '' : 's'} under src/` : ''}`
}

async function distinctPorts (n: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < n) ports.add(await freePort(HOST))
  return [...ports]
}

async function profileGateway (c: Case, upstreamUrl: string, tsx: string, dir: string, clientsFile: string, options: BenchOptions, pinning: Pinning): Promise<ReportInput['profile']> {
  const cached = options.profileMode === 'cached'
  const profDir = join(dir, 'cpu-profile')
  await mkdir(profDir, { recursive: true })
  const [port] = await distinctPorts(1)
  const spawnedAt = Date.now()
  const child = spawnChild({
    name: 'gateway-profiled',
    args: gatewayArgs(options, tsx, ['--cpu-prof', '--cpu-prof-dir', profDir]),
    env: gatewayEnv(port as number, upstreamUrl, options, clientsFile, cached ? { CACHE_TTL_SECONDS: String(options.cacheTtl) } : {}),
    cwd: dir,
    url: `http://${HOST}:${port as number}`,
    logDir: dir
  })
  await waitReady(child, GATEWAY_READY_PATH)
  pinProcess(pinning, 'server', child.pid)
  await checkPinning(pinning, [{ name: child.name, pid: child.pid, role: 'server' }])
  quietPids.push(child.pid)
  // Start-up (module loading, schema compilation) is left out of the summary.
  const fromSeconds = Math.max(0, (Date.now() - spawnedAt) / 1000 - 0.05)
  const load = await measure(child, options.sameUrl || cached ? c.gatewayPath : distinctPaths(c.gatewayPathFor), options.connections, options)
  log(`profile run: ${describe(load)}`)
  await stopChild(child, 15_000)
  const files = (await readdir(profDir)).filter(f => f.endsWith('.cpuprofile'))
  if (files.length === 0) {
    log('no .cpuprofile written (the gateway did not exit normally)')
    return undefined
  }
  const file = join(profDir, files[0] as string)
  if (options.profileOut !== undefined) {
    const target = isAbsolute(options.profileOut) ? options.profileOut : join(process.cwd(), options.profileOut)
    await mkdir(dirname(target), { recursive: true })
    await copyFile(file, target)
    log(`CPU profile kept in ${target}`)
  }
  const summary = await summarizeProfile(file, 25, fromSeconds)
  return { summary, rps: load.rps, caseLabel: `${c.label}, ${options.profileMode}` }
}

async function main (): Promise<number> {
  const argv = process.argv.slice(2)
  let options: BenchOptions
  try {
    options = parseOptions(argv)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const outFile = isAbsolute(options.out) ? options.out : join(ROOT, options.out)
  const startedAt = new Date()
  const machine = {
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    cpus: cpus().length,
    memoryGb: totalmem() / 1024 ** 3,
    os: `${osType()} ${release()} ${arch()}`,
    node: process.version,
    loadAverage: loadavg()
  }

  const gatewayCode = describeCode()
  const pinning = planPinning(options.pin)
  let buildWarning: string | undefined
  if (options.build) {
    log('npm run build')
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env: childEnv({}) })
    if (build.status !== 0) {
      // tsc still emits on type errors; go on with what it emitted, and say so.
      if (!existsSync(join(ROOT, 'dist/server.js'))) throw new Error(`npm run build failed (exit ${String(build.status)}) and dist/server.js is missing`)
      buildWarning = `\`npm run build\` exited with ${String(build.status)} (type errors in src/ at the time); the JavaScript tsc emitted anyway was measured`
      log(buildWarning)
    }
  }

  // After the build, which has every CPU to itself.
  pinProcess(pinning, 'load', process.pid)
  const dir = await mkdtemp(join(tmpdir(), 'gateway-bench-'))
  let keepDir = options.keepLogs
  let redis: BenchRedis | undefined
  try {
    const tsx = import.meta.resolve('tsx')
    log(`preparing upstream bodies from the sandbox (work dir ${dir})`)
    const bodies = await prepareBodies(dir)
    const clientsFile = await writeClientsFile(dir)
    await writeProfileFile(clientsFile, options)
    const cases = casesFrom(bodies, options.cases)
    const needCached = options.modes.includes('cached') && !options.stages
    // buffer and parse beside the uncached and latency pairs (the latency pair runs whatever --modes says), cache beside the cached ones.
    const referenceModes = options.references && !options.stages ? REFERENCE_MODES.filter(mode => UNCACHED_REFERENCES.includes(mode) || (needCached && CACHED_REFERENCES.includes(mode))) : []
    const needContainer = options.container && !options.stages &&
      options.modes.includes('uncached') && cases.some(c => CONTAINER_CASES.includes(c.name))
    const [
      upstreamPort, rawPort, gatewayPort, cachedPort, redisPort, containerPort, metricsPort,
      ...referencePorts
    ] = await distinctPorts(7 + referenceModes.length) as [
      number, number, number, number, number, number, number, ...number[]
    ]
    const container = needContainer ? await containerSetup(ROOT, metricsPort) : undefined

    const upstreamConfig: UpstreamConfig = {
      host: HOST,
      port: upstreamPort,
      latencyMs: options.latency,
      jitterMs: options.jitter,
      apiKeyHeader: API_KEY_HEADER,
      apiKey: SANDBOX_API_KEY,
      accessToken: SANDBOX_ACCESS_TOKEN,
      blListFile: bodies.blListFile,
      sp2Files: { [bodies.sp2.twenty.blNo]: bodies.sp2.twenty.file, [bodies.sp2.fiveHundred.blNo]: bodies.sp2.fiveHundred.file }
    }
    const upstreamConfigFile = join(dir, 'upstream.json')
    await writeFile(upstreamConfigFile, JSON.stringify(upstreamConfig))
    const upstreamUrl = `http://${HOST}:${upstreamPort}`
    const rawConfig: RawProxyConfig = {
      host: HOST,
      port: rawPort,
      upstreamUrl,
      apiKeyHeader: API_KEY_HEADER,
      apiKey: SANDBOX_API_KEY,
      accessToken: SANDBOX_ACCESS_TOKEN,
      connections: options.upstreamConnections
    }

    if (options.redis) {
      log('starting redis-server')
      redis = await startRedis({ host: HOST, port: redisPort, dir, env: childEnv({}) })
    }
    // Each gateway its own database, so that they share nothing through Redis.
    const redisUrls: Record<string, string> = redis === undefined
      ? {}
      : {
          gateway: redis.urlOf(1),
          ...(needCached ? { 'gateway-cached': redis.urlOf(2) } : {}),
          ...(container !== undefined ? { 'gateway-container': redis.urlOf(3) } : {})
        }
    const withRedis = (name: string): Record<string, string> => redisUrls[name] !== undefined ? { REDIS_URL: redisUrls[name] } : {}

    log('starting upstream, raw proxy and gateway')
    const benchDir = fileURLToPath(new URL('.', import.meta.url))
    const upstream = spawnChild({ name: 'upstream', args: ['--import', tsx, join(benchDir, 'upstream.ts'), upstreamConfigFile], env: childEnv({ NODE_ENV: 'production' }), cwd: dir, url: upstreamUrl, logDir: dir })
    const raw = spawnChild({ name: 'raw-proxy', args: ['--import', tsx, join(benchDir, 'raw-proxy.ts'), JSON.stringify(rawConfig)], env: childEnv({ NODE_ENV: 'production' }), cwd: dir, url: `http://${HOST}:${rawPort}`, logDir: dir })
    const gateway = spawnChild({ name: 'gateway', args: gatewayArgs(options, tsx), env: gatewayEnv(gatewayPort, upstreamUrl, options, clientsFile, withRedis('gateway')), cwd: dir, url: `http://${HOST}:${gatewayPort}`, logDir: dir })
    const cached = needCached
      ? spawnChild({ name: 'gateway-cached', args: gatewayArgs(options, tsx), env: gatewayEnv(cachedPort, upstreamUrl, options, clientsFile, { CACHE_TTL_SECONDS: String(options.cacheTtl), ...withRedis('gateway-cached') }), cwd: dir, url: `http://${HOST}:${cachedPort}`, logDir: dir })
      : undefined
    const references = referenceModes.map((mode, i) => {
      const config: ReferenceServerConfig = { ...rawConfig, port: referencePorts[i] as number, mode }
      const script = mode === 'hand-written' ? 'hand-written-server.ts' : 'reference-server.ts'
      return {
        mode,
        child: spawnChild({
          name: `reference-${mode}`,
          args: ['--import', tsx, join(benchDir, script), JSON.stringify(config)],
          env: childEnv({ NODE_ENV: 'production' }),
          cwd: dir,
          url: `http://${HOST}:${config.port}`,
          logDir: dir
        })
      }
    })
    // The ConfigMap's settings over the bench's, and the heap Node picks under the memory limit.
    const containerGateway = container === undefined
      ? undefined
      : spawnChild({
        name: 'gateway-container',
        args: gatewayArgs(options, tsx, container.heapFlags, 'main'),
        env: gatewayEnv(containerPort, upstreamUrl, options, clientsFile, {
          ...container.env,
          ...withRedis('gateway-container')
        }),
        cwd: dir,
        url: `http://${HOST}:${containerPort}`,
        logDir: dir
      })
    await Promise.all([
      waitReady(upstream, UPSTREAM_READY_PATH),
      waitReady(raw, RAW_READY_PATH),
      ...references.map(r => waitReady(r.child, RAW_READY_PATH)),
      // The gateways load and compile more than the others; on a busy machine, from src/, over 30 s.
      ...[gateway, cached, containerGateway].filter((c): c is Child => c !== undefined)
        .map(async (c) => { await waitReady(c, GATEWAY_READY_PATH, GATEWAY_START_MS) })
    ])

    const servers = [raw, gateway, cached, containerGateway, ...references.map(r => r.child)]
      .filter((c): c is Child => c !== undefined)
    const loadSide = [upstream, ...(redis !== undefined ? [redis.child] : [])]
    quietPids.push(...[...loadSide, ...servers].map(c => c.pid))
    loadPids.push(...loadSide.map(c => c.pid))
    // Pinned once ready: they start up on every CPU, in parallel.
    for (const c of loadSide) pinProcess(pinning, 'load', c.pid)
    for (const c of servers) pinProcess(pinning, 'server', c.pid)
    const seen = await checkPinning(pinning, [
      { name: 'bench (autocannon)', pid: process.pid, role: 'load' },
      ...loadSide.map(c => ({ name: c.name, pid: c.pid, role: 'load' as const })),
      ...servers.map(c => ({ name: c.name, pid: c.pid, role: 'server' as const }))
    ])
    const pinningReport: PinningReport = {
      pinned: pinning.pinned,
      text: pinning.pinned
        ? `with \`taskset\`: each server under test (${servers.map(c => c.name).join(', ')}) on CPU ${pinning.serverCpu}, one measured at a time; the load generator (autocannon, in the bench's own process) and the upstream${redis !== undefined ? ' and Redis' : ''} on CPU ${pinning.loadCpu}`
        : pinning.reason,
      seen
    }
    log(`pinning: ${pinningReport.text}`)
    log('checking answers')
    const cache = await verify(cases, raw, gateway, cached, references.map(r => r.child))
    if (containerGateway !== undefined) await verifyContainer(cases, containerGateway)
    if (options.stages) {
      const c = cases[0]!
      let next = 0
      const result = await runStages({
        start: async (variant) => {
          const [port] = await distinctPorts(1)
          const child = spawnChild({
            name: `gateway-${variant}`,
            args: gatewayArgs(options, tsx, ['--import', join(benchDir, 'stages/register.ts')]),
            env: gatewayEnv(port as number, upstreamUrl, options, clientsFile, {
              BENCH_STAGE_VARIANT: variant,
              BENCH_STAGE_BODIES: JSON.stringify({ noblbc: bodies.blListFile, [bodies.sp2.twenty.blNo]: bodies.sp2.twenty.file, [bodies.sp2.fiveHundred.blNo]: bodies.sp2.fiveHundred.file }),
              BENCH_STAGE_LATENCY_MS: String(options.latency)
            }),
            cwd: dir,
            url: `http://${HOST}:${port as number}`,
            logDir: dir
          })
          await waitReady(child, GATEWAY_READY_PATH, GATEWAY_START_MS)
          pinProcess(pinning, 'server', child.pid)
          quietPids.push(child.pid)
          const g = await getJson(child.url + c.gatewayPathFor(`0979${String(next++).padStart(11, '0')}`))
          if (g.status !== 200) throw new Error(`gateway variant ${variant} answered ${g.status}: ${JSON.stringify(g.body).slice(0, 300)}\n${child.tail()}`)
          return child
        },
        measure: async (child) => await measure(child, distinctPaths(c.gatewayPathFor), options.connections, options),
        fill: async (child) => {
          await runLoad({ url: child.url + '/', connections: options.connections, durationS: options.fill, headers: CLIENT_HEADERS, nextPath: distinctPaths(c.gatewayPathFor) })
        },
        raw,
        measureRaw: async () => await measure(raw, distinctPaths(c.rawPathFor), options.connections, options),
        rounds: options.rounds,
        log
      })
      const markdown = [
        '# Stage costs of an uncached lookup',
        '',
        `Written by \`${commandLine(argv)}\` on ${startedAt.toISOString()}, ${gatewayCode}, ` +
        `Node ${machine.node}, ${machine.cpus} × ${machine.cpu}, load average at the start ` +
        `${machine.loadAverage.map(l => l.toFixed(1)).join(' ')}. ${c.label}, uncached ` +
        `(a distinct NPWP per request), ${options.connections} connections` +
        (options.rate > 0
          ? ` offering ${options.rate} requests a second (each variant does the same work ` +
            'per second)'
          : '') +
        `, ${runLength(options)} runs, ${options.rounds} rounds; pinning ${pinningReport.text}. ` +
        'See docs/performance.md#stage-costs for what each stage buys.',
        '',
        renderStages(result, '## CPU per request, by stage taken out')
      ].join('\n')
      await mkdir(dirname(outFile), { recursive: true })
      await writeFile(outFile, `${markdown}\n`)
      process.stdout.write(`${markdown}\n`)
      log(`wrote ${relative(process.cwd(), outFile) || outFile}`)
      return 0
    }
    if (cache !== undefined) log(`response cache: ${cache.available ? 'available' : 'NOT available'} (${cache.detail})`)

    const targets: Targets = { raw, gateway, cached, references, container: containerGateway }
    const pairs: Pair[] = []
    const latencyCase = cases.find(c => c.name === 'sp2-20')
    for (let round = 1; round <= options.rounds; round++) {
      for (const c of cases) {
        for (const mode of options.modes as ModeName[]) {
          pairs.push(await runPair(round, c, mode, options.connections, targets, options))
        }
        // The latency case runs right after SP2-20, before SP2-500 leaves a big heap behind.
        if (c === latencyCase) pairs.push(await runPair(round, latencyCase, 'latency', options.p99Connections, targets, options))
      }
    }

    // The REDIS_URL each gateway was really started with, read back from the process.
    const givenUrls: Record<string, string> = {}
    for (const child of [gateway, cached, containerGateway]) {
      if (child !== undefined && redisUrls[child.name] !== undefined) givenUrls[child.name] = await environmentOf(child.pid, 'REDIS_URL') ?? 'missing from its environment'
    }
    const redisReport = redis === undefined ? undefined : { version: redis.version, urls: givenUrls, activity: await redis.activity().catch(() => undefined) }
    if (redisReport !== undefined) log(`redis: ${redisReport.activity === undefined ? 'activity unknown' : `${redisReport.activity.connections} connections, ${redisReport.activity.commands} commands from the gateways`}`)
    await redis?.close()
    const lifetimePeaks: Record<string, number | undefined> = {}
    for (const child of [gateway, cached, containerGateway, raw, upstream]) {
      if (child !== undefined) lifetimePeaks[child.name] = (await memoryOf(child.pid))?.hwmMb
    }
    const everyChild = [
      raw, upstream, gateway, cached, containerGateway, ...references.map(r => r.child)
    ]
    for (const child of everyChild) {
      if (child !== undefined) {
        const problems = child.tail().split('\n').filter(l => /"level":\s*(50|60)|Error/.test(l))
        if (problems.length > 0) log(`${child.name} logged errors (see ${child.logFile}):\n${problems.slice(-5).join('\n')}`)
      }
    }
    await stopAll()

    let profile: ReportInput['profile']
    const big = cases.find(c => c.name === options.profileCase)
    if (options.profile && big !== undefined) {
      log(`profiling the gateway on one ${big.name} run`)
      const profUpstream = spawnChild({ name: 'upstream-profile', args: ['--import', tsx, join(benchDir, 'upstream.ts'), upstreamConfigFile], env: childEnv({ NODE_ENV: 'production' }), cwd: dir, url: upstreamUrl, logDir: dir })
      await waitReady(profUpstream, UPSTREAM_READY_PATH)
      pinProcess(pinning, 'load', profUpstream.pid)
      try {
        quietPids.length = 0
        quietPids.push(profUpstream.pid)
        loadPids.length = 0
        loadPids.push(profUpstream.pid)
        settled = false
        profile = await profileGateway(big, upstreamUrl, tsx, dir, clientsFile, options, pinning)
      } catch (error) {
        log(`profiling failed: ${(error as Error).message}`)
      }
      await stopAll()
    }

    log('the transcoder alone')
    // A quick run (the smoke test) measures it briefly.
    const transcoder = await (options.duration < 2 ? measureTranscoder(1, 100) : measureTranscoder()).catch((error: unknown) => {
      log(`transcoder measurement failed: ${(error as Error).message}`)
      return undefined
    })
    const input: ReportInput = {
      transcoder,
      options,
      command: commandLine(argv),
      date: startedAt,
      machine,
      cases,
      cache,
      pairs,
      lifetimePeaks,
      profile,
      gatewayEntry: options.source ? 'src/server.ts (tsx)' : 'dist/server.js',
      blSynthesized: bodies.blSynthesized,
      buildWarning,
      gatewayCode,
      ...(container !== undefined ? { container } : {}),
      pinning: pinningReport,
      clockTicks: clockTicks(),
      redis: redisReport
    }
    const markdown = renderReport(input)
    await mkdir(dirname(outFile), { recursive: true })
    await writeFile(outFile, markdown)
    process.stdout.write(`${markdown}\n`)
    process.stdout.write(`${renderTargetsText(input)}\n`)
    log(`wrote ${relative(process.cwd(), outFile) || outFile}`)
    return 0
  } catch (error) {
    keepDir = true
    throw error
  } finally {
    await redis?.close()
    await stopAll()
    if (keepDir) log(`logs kept in ${dir}`)
    else await rm(dir, { recursive: true, force: true })
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping`)
    stopAll().finally(() => process.exit(130))
  })
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
})
