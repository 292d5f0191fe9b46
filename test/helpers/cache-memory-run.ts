// Run by test/app/cache-memory.test.ts in a process of its own, with --expose-gc:
// fills the gateway's lookup cache through the real gateway on the sandbox
// with distinct lookups and prints what stayed in memory after a full GC.
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { sandboxEnv } from '../../src/sandbox/index.ts'
import { measureMemory, startSandboxProcess } from './memory-runs.ts'

const [lookups = 200_000, maxBytes = 8 * 1024 * 1024] = process.argv.slice(2).map(Number)
const sandbox = await startSandboxProcess()
let errors = 0
const config = resolveConfig({
  ...sandboxEnv(sandbox.url),
  CACHE_TTL_SECONDS: '600',
  CACHE_STALE_IF_ERROR_SECONDS: '0',
  CACHE_MAX_BYTES: String(maxBytes),
  RATE_LIMIT_MAX: '1000000',
  // One caller (without authentication, one address) makes 32 hub calls at a time here.
  UPSTREAM_MAX_CALLS_PER_CLIENT: '0',
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
})
// The warm-up's lookups are not cached, so that the baseline holds no entries.
const profile = { name: 'memory-run', operations: { noblbc16: { cacheTtlSeconds: 0 } } }
const stream = { write: (text: string) => { if (/"level":(50|60)/.test(text)) errors++ } }
const app = await buildApp({ config, sandbox: true, profile }, { level: 'warn', stream })

async function run (count: number, url: (i: number) => string): Promise<void> {
  let next = 0
  // 32 at a time: the gateway's and the sandbox's sockets stay few, and the run short.
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < count) {
      const res = await app.inject({ url: url(next++) })
      if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}: ${res.body}`)
    }
  }))
}

// The sandbox answers unknown NPWPs with an empty list, at once.
const npwp = (base: number, i: number) => String(base + i).padStart(15, '0')
await run(3000, i => `/v1/customs/bc16/bills-of-lading?npwp=${npwp(300_000_000_000_000, i)}`)
const before = (await measureMemory()).heap
const started = Date.now()
await run(lookups, i => `/v1/customs/bc20/bills-of-lading?npwp=${npwp(100_000_000_000_000, i)}`)
const seconds = (Date.now() - started) / 1000
const after = (await measureMemory()).heap
const usage = app.hub.cacheUsage()
await app.close()
sandbox.stop()
const retainedBytes = after - before
const summary = { lookups, seconds, maxBytes, retainedBytes, ...usage, errors }
process.stdout.write(JSON.stringify(summary) + '\n')
