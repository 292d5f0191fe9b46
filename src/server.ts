import closeWithGrace from 'close-with-grace'
import Fastify from 'fastify'
import gateway, { serverOptions, type GatewayConfig } from './app.ts'
import { ConfigError, isSandboxMode, loadConfig, loadEnvFile, type Config } from './config/load.ts'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID, startSandbox, type Sandbox } from './sandbox/index.ts'

/** The process: configuration, logger, the sandbox when no hub is configured, listen, graceful close. */

function readConfig (): Config {
  loadEnvFile()
  try {
    return loadConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`config error: ${problem}\n`)
      process.exit(1)
    }
    throw error
  }
}

const config = readConfig()
const app = Fastify({
  ...serverOptions(config, { level: config.LOG_LEVEL }),
  // Bounded client timeouts; keep-alive above a typical load balancer's 60 s idle timeout.
  connectionTimeout: 60_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 72_000
})

let sandbox: Sandbox | undefined
let gatewayConfig: GatewayConfig
if (isSandboxMode(config)) {
  sandbox = await startSandbox({ apiKeyHeader: config.UPSTREAM_API_KEY_HEADER, pathSegment: config.UPSTREAM_PATH_SEGMENT, platformId: config.PLATFORM_ID ?? SANDBOX_PLATFORM_ID })
  app.log.warn({ sandbox: sandbox.url }, `no upstream configured: fronting the built-in sandbox at ${sandbox.url}`)
  gatewayConfig = {
    ...config,
    UPSTREAM_HUB_URL: sandbox.url,
    UPSTREAM_BASE_URL: sandbox.url,
    UPSTREAM_API_KEY: config.UPSTREAM_API_KEY ?? SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: config.UPSTREAM_ACCESS_TOKEN ?? SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: config.PLATFORM_ID ?? SANDBOX_PLATFORM_ID
  }
} else {
  // loadConfig has checked that these are set when an upstream is configured.
  gatewayConfig = config as GatewayConfig
}

await app.register(gateway, { config: gatewayConfig, sandbox: sandbox !== undefined })

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'closing')
  await app.close()
  await sandbox?.close()
})

try {
  await app.listen({ port: config.PORT, host: config.HOST })
} catch (error) {
  app.log.fatal({ err: error }, 'could not listen')
  await sandbox?.close()
  process.exit(1)
}
