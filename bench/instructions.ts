// `npx tsx bench/instructions.ts [options]`: instructions a server executes per
// answered request, counted by valgrind's callgrind, so that the figure does
// not depend on what else the machine runs (CPU time does: on a shared
// machine, cache misses and frequency change it from run to run). Each
// server runs under callgrind with counting off; it gets --warmup requests
// (V8 compiles its hot code), then counting is switched on for --requests
// more, all from this process with --connections in flight, each request a
// distinct lookup. Prints instructions per request per target, and each
// target's ratio to the first one's.
//
//   --targets a,b,…   gateway (dist/), raw-proxy, hand-written, reference-parse,
//                     reference-buffer,
//                     stage:<variant> (the gateway with a stage of bench/stages taken out),
//                     dir:<path> (a gateway built into <path>/dist, e.g. an older build)
//   --case bl|sp2-20|sp2-500 (default bl)
//   --warmup n (default 3000), --requests n (default 2000), --connections n (default 32)
//   --latency ms (the upstream's, default 20), --env NAME=VALUE (the gateway's, repeatable)
//   --cpu-prof: no callgrind; the server runs with V8's sampling profiler instead and
//               its top functions by self time are printed (where to look, not a figure)
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from '../src/sandbox/index.ts'
import { API_KEY_HEADER, prepareBodies } from './bodies.ts'
import { freePort } from './processes.ts'
import { summarizeProfile } from './profile.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const HOST = '127.0.0.1'
const KEY = 'bench-client-key-0d5c1e7a9b3f4862'

const { values } = parseArgs({
  options: {
    targets: { type: 'string', default: 'gateway,raw-proxy' },
    case: { type: 'string', default: 'bl' },
    warmup: { type: 'string', default: '3000' },
    requests: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '32' },
    latency: { type: 'string', default: '20' },
    env: { type: 'string', multiple: true, default: [] },
    'cpu-prof': { type: 'boolean', default: false }
  }
})
const warmup = Number(values.warmup)
const requests = Number(values.requests)
const connections = Number(values.connections)
const extraEnv = Object.fromEntries(values.env.map(pair => {
  const at = pair.indexOf('=')
  return [pair.slice(0, at), pair.slice(at + 1)]
}))

const dir = await mkdtemp(join(tmpdir(), 'instructions-'))
const bodies = await prepareBodies(dir)
const tsx = join(ROOT, 'node_modules/tsx/dist/esm/index.mjs')
const clientsFile = join(dir, 'clients.json')
await writeFile(clientsFile, JSON.stringify([{
  name: 'bench',
  keySha256: createHash('sha256').update(KEY).digest('hex'),
  scopes: ['customs:read', 'sp2:read'],
  rateLimit: { max: 1_000_000, timeWindow: '1 minute' }
}]))
const profileFile = join(dir, 'hub-profile.json')
// Under callgrind everything runs some 50 times slower: the hub's answers must not time out.
await writeFile(profileFile, JSON.stringify({
  name: 'bench',
  connections: { max: connections },
  defaults: { timeouts: { headersMs: 60_000, bodyMs: 60_000 } }
}))

const upstreamPort = await freePort(HOST)
const upstreamUrl = `http://${HOST}:${upstreamPort}`
const upstreamConfig = join(dir, 'upstream.json')
await writeFile(upstreamConfig, JSON.stringify({
  host: HOST,
  port: upstreamPort,
  latencyMs: Number(values.latency),
  jitterMs: 0,
  apiKeyHeader: API_KEY_HEADER,
  apiKey: SANDBOX_API_KEY,
  accessToken: SANDBOX_ACCESS_TOKEN,
  blListFile: bodies.blListFile,
  sp2Files: {
    [bodies.sp2.twenty.blNo]: bodies.sp2.twenty.file,
    [bodies.sp2.fiveHundred.blNo]: bodies.sp2.fiveHundred.file
  }
}))
const upstream = spawn(process.execPath, ['--import', tsx, join(ROOT, 'bench/upstream.ts'),
  upstreamConfig], { stdio: 'ignore' })

let sent = 0
function pathOf (target: string): string {
  const npwp = `097${String(sent++ % 1e12).padStart(12, '0')}`
  const gateway = !['raw', 'reference', 'hand'].some(prefix => target.startsWith(prefix))
  const sp2 = values.case === 'sp2-20' ? bodies.sp2.twenty : bodies.sp2.fiveHundred
  if (values.case === 'bl') {
    return gateway ? `/v1/customs/bc20/bills-of-lading?npwp=${npwp}` : `/raw/bl?npwp=${npwp}`
  }
  const query = `npwp=${npwp}&blNo=${sp2.blNo}&blDate=${sp2.blDate}`
  return gateway ? `/v1/sp2/documents?${query}` : `/raw/sp2?${query}`
}

function commandOf (target: string, port: number): { args: string[], env: Record<string, string> } {
  const common = {
    host: HOST,
    port,
    upstreamUrl,
    apiKeyHeader: API_KEY_HEADER,
    apiKey: SANDBOX_API_KEY,
    accessToken: SANDBOX_ACCESS_TOKEN,
    connections
  }
  if (target === 'raw-proxy') {
    const script = join(ROOT, 'bench/raw-proxy.ts')
    return { args: ['--import', tsx, script, JSON.stringify(common)], env: {} }
  }
  if (target === 'hand-written') {
    const script = join(ROOT, 'bench/hand-written-server.ts')
    return { args: ['--import', tsx, script, JSON.stringify(common)], env: {} }
  }
  if (target.startsWith('reference-')) {
    const config = JSON.stringify({ ...common, mode: target.slice('reference-'.length) })
    return { args: ['--import', tsx, join(ROOT, 'bench/reference-server.ts'), config], env: {} }
  }
  const env: Record<string, string> = {
    CLIENTS_FILE: clientsFile,
    RATE_LIMIT_MAX: '1000000',
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
    UPSTREAM_PROFILE_FILE: profileFile,
    UPSTREAM_MAX_CALLS_PER_CLIENT: '0',
    UPSTREAM_DEADLINE_MS: '120000',
    // Under callgrind the loop turns some 50 times slower: not a load to shed.
    PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '60000',
    ...extraEnv
  }
  if (target.startsWith('stage:')) {
    const register = join(ROOT, 'bench/stages/register.ts')
    return {
      args: ['--import', tsx, '--import', register, join(ROOT, 'dist/server.js')],
      env: { ...env, BENCH_STAGE_VARIANT: target.slice('stage:'.length) }
    }
  }
  const base = target.startsWith('dir:') ? resolve(target.slice('dir:'.length)) : ROOT
  // Not dist/server.js: under callgrind a plugin can take longer to start than Fastify waits.
  return { args: ['--import', tsx, join(ROOT, 'bench/callgrind-server.ts'), base], env }
}

async function until (alive: () => void, ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    alive()
    if (await ok().catch(() => false)) return
    await sleep(200)
  }
  throw new Error('not ready')
}

async function load (pool: Pool, target: string, n: number): Promise<void> {
  let started = 0
  const headers = { authorization: `Bearer ${KEY}` }
  const worker = async (): Promise<void> => {
    while (started++ < n) {
      const path = pathOf(target)
      const { statusCode, body } = await pool.request({ method: 'GET', path, headers })
      const text = await body.text()
      if (statusCode !== 200) {
        throw new Error(`${target} answered ${statusCode}: ${text.slice(0, 300)}`)
      }
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
}

async function measure (target: string): Promise<number> {
  const port = await freePort(HOST)
  const out = join(dir, `callgrind.${target.replaceAll(/[^a-z0-9-]/gi, '_')}.out`)
  const { args, env } = commandOf(target, port)
  const profiled = values['cpu-prof']
  const profDir = join(dir, `prof-${port}`)
  const command = profiled
    ? [process.execPath, '--cpu-prof', `--cpu-prof-dir=${profDir}`, ...args]
    : ['valgrind', '--tool=callgrind', '--instr-atstart=no',
        `--callgrind-out-file=${out}`, process.execPath, ...args]
  const spawned = performance.now()
  let measuredFrom = 0
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, ...env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  const keep = (chunk: Buffer): void => { stderr = (stderr + chunk.toString()).slice(-4000) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise(resolve => child.once('exit', resolve))
  const url = `http://${HOST}:${port}`
  const pool = new Pool(url, { connections })
  try {
    await until(() => {
      // Outside the probe: until() takes a failed probe for "not yet".
      if (child.exitCode !== null) throw new Error(`${target} exited: ${stderr}`)
    }, async () => {
      const ready = env.PORT === undefined ? '/__bench/ready' : '/health/ready'
      const res = await fetch(url + ready)
      await res.arrayBuffer()
      return res.status === 200
    })
    await load(pool, target, warmup)
    const control = (flag: string): void => {
      // With the server's environment: valgrind names its control pipe after $HOST.
      const r = spawnSync('callgrind_control', [flag, String(child.pid)],
        { encoding: 'utf8', env: { ...process.env, ...env } })
      if (r.status !== 0) throw new Error(`callgrind_control ${flag}: ${r.stderr}`)
      if (process.env.INSTRUCTIONS_DEBUG !== undefined) process.stderr.write(r.stdout + r.stderr)
    }
    measuredFrom = (performance.now() - spawned) / 1000
    if (!profiled) {
      control('--zero')
      control('--instr=on')
    }
    await load(pool, target, requests)
    if (!profiled) {
      control('--instr=off')
      control('--dump')
    }
  } finally {
    await pool.close()
    child.kill('SIGTERM')
    await exited
  }
  if (profiled) {
    const [file] = await readdir(profDir)
    const summary = await summarizeProfile(join(profDir, file!), 45, measuredFrom)
    for (const f of [...summary.origins, ...summary.functions]) {
      process.stderr.write(`${(f.share * 100).toFixed(1).padStart(5)} % ${f.name}\n`)
    }
    return 0
  }
  const dumps = (await readdir(dir)).filter(f => f.startsWith(out.slice(dir.length + 1)))
  let total = 0
  for (const file of dumps) {
    const text = await readFile(join(dir, file), 'utf8')
    // Each dump's totals since the last zeroing; the dump asked for holds the measured run.
    if (!/^desc: Trigger: .*dump/mi.test(text)) continue
    total = Math.max(total, Number(/^totals: (\d+)/m.exec(text)?.[1] ?? 0))
  }
  return total / requests
}

try {
  const figures: Array<[string, number]> = []
  for (const target of values.targets.split(',')) {
    const figure = await measure(target)
    figures.push([target, figure])
    process.stderr.write(`${target}: ${Math.round(figure)} instructions per request\n`)
  }
  const first = figures[0]![1]
  process.stdout.write(`| target (${values.case}) | instructions per request | ratio |\n` +
    '| --- | ---: | ---: |\n')
  for (const [target, figure] of figures) {
    process.stdout.write(`| ${target} | ${Math.round(figure)} | ${(figure / first).toFixed(3)} |\n`)
  }
} finally {
  upstream.kill('SIGTERM')
  if (process.env.KEEP_INSTRUCTIONS_DIR === undefined) {
    await rm(dir, { recursive: true, force: true })
  } else process.stderr.write(`kept ${dir}\n`)
}
