import closeWithGrace from 'close-with-grace'
import Fastify from 'fastify'
import gateway, { serverOptions, type GatewayConfig } from './app.ts'
import { ConfigError, isSandboxMode, loadConfig, loadEnvFile, unknownSettings, type Config } from './config/load.ts'
import { plainHttpWarnings } from './config/plain-http.ts'
import { sandboxEnv } from './config/sandbox-env.ts'
import { SANDBOX_PLATFORM_ID, startSandbox, type Sandbox } from './sandbox/index.ts'

/** The process: configuration, logger, the sandbox when no hub is configured, listen, graceful close. */

/**
 * The validated configuration: the environment's non-empty settings over
 * `defaults` (the sandbox's, in sandbox mode). Problems end the process with
 * one `config error:` line each.
 */
function readConfig (defaults: Record<string, string> = {}, ignore: readonly string[] = []): Config {
  const given = Object.fromEntries(Object.entries(process.env).filter(([name, value]) => value !== undefined && value.trim() !== '' && !ignore.includes(name)))
  try {
    return loadConfig({ ...defaults, ...given })
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`config error: ${problem}\n`)
      process.exit(1)
    }
    throw error
  }
}

loadEnvFile()
const config = readConfig()
const app = Fastify({
  ...serverOptions(config, { level: config.LOG_LEVEL }),
  // Bounded client timeouts (README, Configuration). Node checks the headers and
  // request timeouts every connectionsCheckingInterval (30 s by default): every
  // second here, so that a client sending its headers slowly is cut off near its time.
  http: { headersTimeout: config.SERVER_HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
  requestTimeout: config.SERVER_REQUEST_TIMEOUT_MS,
  keepAliveTimeout: config.SERVER_KEEP_ALIVE_TIMEOUT_MS,
  connectionTimeout: 60_000
})
// Past this many, Node closes a new connection at once.
app.server.maxConnections = config.SERVER_MAX_CONNECTIONS

let sandbox: Sandbox | undefined
let gatewayConfig: GatewayConfig
if (isSandboxMode(config)) {
  sandbox = await startSandbox({ apiKeyHeader: config.UPSTREAM_API_KEY_HEADER, pathSegment: config.UPSTREAM_PATH_SEGMENT, platformId: config.PLATFORM_ID ?? SANDBOX_PLATFORM_ID })
  // One first line: the sandbox, and whether callers must authenticate (README, Security).
  const authOff = config.CLIENTS_FILE === undefined
  app.log.warn({ sandbox: sandbox.url, authentication: authOff ? 'off' : 'on' },
    `no upstream configured: fronting the built-in sandbox at ${sandbox.url}` +
    (authOff ? '; client authentication is OFF (no CLIENTS_FILE): any caller may call every route' : ''))
  // The sandbox's own settings under whatever the environment sets (a token
  // file replaces the sandbox's token rather than conflicting with it).
  const defaults = sandboxEnv(sandbox.url)
  if (config.UPSTREAM_ACCESS_TOKEN_FILE !== undefined) delete defaults.UPSTREAM_ACCESS_TOKEN
  // SANDBOX was read above; beside the sandbox's own hub addresses it would be a contradiction.
  gatewayConfig = readConfig(defaults, ['SANDBOX']) as GatewayConfig
} else {
  // loadConfig has checked that these are set when an upstream is configured.
  gatewayConfig = config as GatewayConfig
}
for (const { setting, host, message } of plainHttpWarnings(gatewayConfig)) app.log.warn({ setting, host }, message)

// One line per variable that looks like a setting but is none (a typo is otherwise silent).
for (const { name, meant } of unknownSettings(process.env)) {
  app.log.warn({ variable: name, ...(meant === undefined ? {} : { meant }) }, `unknown setting ${name} is ignored${meant === undefined ? '' : `: did you mean ${meant}?`}`)
}

try {
  await app.register(gateway, { config: gatewayConfig, sandbox: sandbox !== undefined })
} catch (error) {
  // Problems only the gateway can see (CLIENTS_FILE missing or invalid): the same lines as loadConfig's.
  if (error instanceof ConfigError) {
    for (const problem of error.problems) process.stderr.write(`config error: ${problem}\n`)
    await sandbox?.close()
    process.exit(1)
  }
  throw error
}

closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'closing')
  await app.close()
  await sandbox?.close()
})

try {
  const address = await app.listen({ port: config.PORT, host: config.HOST })
  // Where to start: a wildcard listen address is not one a browser can open.
  const docs = `${address.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, '//localhost')}/docs`
  app.log.info({ docs }, `API documentation (Swagger UI): ${docs}`)
} catch (error) {
  app.log.fatal({ err: error }, 'could not listen')
  await sandbox?.close()
  process.exit(1)
}
