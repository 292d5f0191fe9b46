// `npx tsx bench/call-path-micro.ts [src dir ...]`: what the hub client's call
// path costs per call (createHubClient().call, every policy, the transport
// and the decoder), measured in one process against a local server that
// answers every request with one BL list the sandbox gave (its cost is the
// same in every row). Given several source trees (default: src; e.g. a copy
// of an older checkout's src/ inside this checkout, for its node_modules),
// it runs their clients interleaved (A, B, A, B…), each a batch of calls
// with 16 in flight, timed by the process's CPU time; the report is the
// median per call over rounds, the least (the round other work on the
// machine disturbed least), and every round's figure.
//
// - uncached: a distinct lookup per call, nothing kept (CACHE_TTL_SECONDS 0);
// - cached: the same lookup every call, answered by the lookup cache.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import pino from 'pino'
import { request } from 'undici'
import { SANDBOX_FIXTURES, sandboxEnv, startSandbox } from '../src/sandbox/index.ts'

type ClientModule = typeof import('../src/upstream/client.ts')
type HubClient = import('../src/upstream/client.ts').HubClient
type HubCaller = import('../src/upstream/client.ts').HubCaller
type LookupBudget = import('../src/state/types.ts').LookupBudget

const IN_FLIGHT = 16
const CALLS = 4000
const ROUNDS = 15
const dirs = process.argv.length > 2 ? process.argv.slice(2) : ['src']

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

// One answer of the sandbox, then that answer to every request.
const sandbox = await startSandbox({})
let answer: Buffer | undefined
const server = createServer((req, res) => {
  const send = (body: Buffer): void => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    res.end(body)
  }
  if (answer !== undefined) {
    send(answer)
    return
  }
  request(sandbox.url + (req.url ?? '/'), { headers: req.headers })
    .then(async ({ statusCode, body }) => {
      const bytes = Buffer.from(await body.arrayBuffer())
      if (statusCode !== 200) throw new Error(`sandbox answered ${statusCode}: ${bytes.toString()}`)
      answer = bytes
      send(bytes)
    })
    .catch((error: unknown) => {
      res.writeHead(500)
      res.end(String(error))
    })
})
await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const log = pino({ level: 'silent' })
const caller: HubCaller = { id: 'r', log, headers: {}, client: { name: 'bench' } }
const npwp = SANDBOX_FIXTURES.taxpayer.npwp

async function clientOf (dir: string, cacheTtl: string): Promise<HubClient> {
  const at = (file: string): string => pathToFileURL(resolve(dir, file)).href
  const { createHubClient } = await import(at('upstream/client.ts')) as ClientModule
  const { resolveConfig } = await import(at('config/resolve.ts')) as
    typeof import('../src/config/resolve.ts')
  const { createCredentials } = await import(at('credentials/index.ts')) as
    typeof import('../src/credentials/index.ts')
  const { resolveProfile } = await import(at('profile/resolve.ts')) as
    typeof import('../src/profile/resolve.ts')
  const { createMemoryTokenStore } = await import(at('state/memory/token-store.ts')) as
    typeof import('../src/state/memory/token-store.ts')
  const { createMemoryLookupStore } = await import(at('state/memory/lookup-cache.ts')) as
    typeof import('../src/state/memory/lookup-cache.ts')
  const config = resolveConfig({
    ...sandboxEnv(upstream),
    CACHE_TTL_SECONDS: cacheTtl,
    UPSTREAM_MAX_CALLS_PER_CLIENT: '1000',
    LOG_LEVEL: 'silent'
  })
  const credentials = createCredentials(config, resolveProfile(config), {
    log, tokens: createMemoryTokenStore({}), clock: Date.now
  })
  // (A tree from before the state made the cache's store ignores lookupStore.)
  const lookupStore = <T>(budget: LookupBudget) => createMemoryLookupStore<T>(budget)
  return createHubClient({ config, credentials, userAgent: 'bench', lookupStore })
}

let next = 0
const uncached = (client: HubClient) => async () => {
  const value = String(100_000_000_000_000 + next++)
  await client.call(caller, { operation: 'noblbc20', params: { npwp: value } })
}
const cached = (client: HubClient) => async () => {
  await client.call(caller, { operation: 'noblbc20', params: { npwp } })
}

async function batch (call: () => Promise<void>, n: number): Promise<number> {
  let started = 0
  const worker = async (): Promise<void> => {
    while (started++ < n) await call()
  }
  const start = process.cpuUsage()
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

// The first call of the first client asks the sandbox for the answer served from then on.
const rows: Array<{ name: string, call: () => Promise<void>, figures: number[] }> = []
const clients: HubClient[] = []
for (const dir of dirs) {
  const plain = await clientOf(dir, '0')
  const keeping = await clientOf(dir, '60')
  clients.push(plain, keeping)
  rows.push({ name: `${dir}: uncached`, call: uncached(plain), figures: [] })
  rows.push({ name: `${dir}: cached`, call: cached(keeping), figures: [] })
}
// Warm-up: every row once, not recorded.
for (const row of rows) await batch(row.call, CALLS)
for (let round = 0; round < ROUNDS; round++) {
  const shift = round % rows.length
  for (const row of [...rows.slice(shift), ...rows.slice(0, shift)]) {
    row.figures.push(await batch(row.call, CALLS))
  }
}
process.stdout.write(
  '| call path | µs per call (median) | least | rounds |\n| --- | ---: | ---: | --- |\n'
)
for (const row of rows) {
  const all = row.figures.map(f => f.toFixed(1)).join(', ')
  const least = Math.min(...row.figures).toFixed(1)
  process.stdout.write(`| ${row.name} | ${median(row.figures).toFixed(1)} | ${least} | ${all} |\n`)
}
await Promise.all(clients.map(async client => await client.close()))
server.close()
await sandbox.close()
