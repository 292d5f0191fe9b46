// Shared by the memory runs (test/helpers/cache-memory-run.ts, test/helpers/soak-run.ts) and
// the tests that start them: each run is a process of its own, with
// --expose-gc, and the sandbox is another, so that what is measured is the
// gateway's memory alone.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'

/**
 * Starts `npm run sandbox` on a free port: its address, and how to stop it
 * (a run calls it when done; its pipes would keep the run alive). It also
 * goes with this process however that ends (a test runner stops it with
 * SIGTERM); its output is piped, not inherited, so that a sandbox left
 * behind could not hold the test runner's output open.
 */
export async function startSandboxProcess (): Promise<{ url: string, stop: () => void }> {
  const sandbox = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts'], {
    env: { PATH: process.env.PATH ?? '', SANDBOX_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  sandbox.stderr.pipe(process.stderr)
  process.on('exit', () => { sandbox.kill() })
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(1))
  const first = await createInterface({ input: sandbox.stdout })[Symbol.asyncIterator]().next()
  const url = /listening on (http:\/\/\S+)/.exec(String(first.value))?.[1]
  if (url === undefined) throw new Error(`sandbox did not start: ${String(first.value)}`)
  return { url, stop: () => { sandbox.kill() } }
}

/**
 * Memory V8 can see, the heap and the ArrayBuffers outside it, and RSS,
 * after full collections. First a pause: undici's coarse timers hold each
 * finished request for up to a second (measured: 13 KB a request right after
 * a burst, nothing 500 ms later), which is not what is measured.
 */
export async function measureMemory (): Promise<{ heap: number, rss: number }> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run with --expose-gc')
  await new Promise(resolve => setTimeout(resolve, 1000))
  for (let i = 0; i < 3; i++) gc()
  const { heapUsed, arrayBuffers, rss } = process.memoryUsage()
  return { heap: heapUsed + arrayBuffers, rss }
}

/** Runs a memory run script and returns its exit code and the JSON line it printed. */
export async function runMemoryRun<T> (
  script: string,
  args: Array<string | number>
): Promise<{ code: number; result: T }> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', script, ...args.map(String)],
    {
      // A clean environment: no coverage hooks of the test runner, whose counters would be in the
      // heap measured.
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'inherit']
    }
  )
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  const [code] = (await once(child, 'exit')) as [number]
  return { code, result: (out.trim() === '' ? {} : JSON.parse(out)) as T }
}
