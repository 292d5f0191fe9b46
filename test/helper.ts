import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp, type GatewayConfig } from '../src/app.ts'
import { loadConfig } from '../src/config/load.ts'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID, startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.ts'

export { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID }

/** The subset of a tap `Test` the helpers use. */
interface TestLike { teardown (fn: () => unknown): void }

export interface Built {
  app: FastifyInstance
  sandbox: Sandbox
  config: GatewayConfig
  /** Every log line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>
  /** Every log line the app wrote, raw. */
  rawLogs: string[]
}

export interface BuildOptions {
  /** Environment variables, as the gateway would read them. */
  env?: Record<string, string>
  sandbox?: SandboxOptions
}

/**
 * Builds the gateway in front of a real sandbox on a random loopback port and
 * closes both in teardown. Logs are captured at debug level.
 */
export async function build (t: TestLike, options: BuildOptions = {}): Promise<Built> {
  const sandbox = await startSandbox({ ...options.sandbox })
  const config = loadConfig({
    UPSTREAM_HUB_URL: sandbox.url,
    UPSTREAM_BASE_URL: sandbox.url,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: SANDBOX_PLATFORM_ID,
    LOG_LEVEL: 'debug',
    ...options.env
  }) as GatewayConfig
  const rawLogs: string[] = []
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        rawLogs.push(line)
        logs.push(JSON.parse(line) as Record<string, unknown>)
      }
      callback()
    }
  })
  const app = await buildApp({ config, sandbox: false }, { level: 'debug', stream })
  t.teardown(async () => {
    await app.close()
    await sandbox.close()
  })
  return { app, sandbox, config, logs, rawLogs }
}
