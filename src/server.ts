import closeWithGrace from 'close-with-grace'
import Fastify from 'fastify'
import pino from 'pino'
import gateway, { loggerOptions, REQUEST_ID_LOG_LABEL, serverOptions, VERSION } from './app.ts'
import { listenHost, LOOPBACK_ADVICE } from './config/listen.ts'
import { ConfigError, isSandboxMode, loadConfig, loadEnvFile } from './config/load.ts'
import { plainHttpWarnings } from './config/plain-http.ts'
import { resolveConfig } from './config/resolve.ts'
import { startLine } from './config/start-line.ts'
import { tracingSettings } from './config/tracing.ts'
import { unknownSettings } from './config/unknown-settings.ts'
import { loadProfileFile } from './profile/load.ts'
import type { HubProfile } from './profile/schema.ts'
import type { Sandbox } from './sandbox/index.ts'
import { startMetricsServer, type MetricsServer } from './telemetry/metrics-server.ts'

/** The process: configuration, the logger (pino), the sandbox when no hub is configured, listen, graceful close. */

/** `read()`, or the process ends with one `config error:` line per problem. */
function orExit<T> (read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`config error: ${problem}\n`)
      process.exit(1)
    }
    throw error
  }
}

loadEnvFile()
// Read once to know where the hub is (and to build the logger); resolved below, with the sandbox's settings when it is the sandbox.
const config = orExit(() => loadConfig(process.env))
// Tracing only when the OTEL_* variables ask for it: otherwise the SDK is never loaded.
const tracing = orExit(() => tracingSettings(process.env)).enabled
  ? (await import('./telemetry/tracing.ts')).startTracing({ serviceVersion: VERSION, propagateUpstream: config.UPSTREAM_TRACE_PROPAGATION, requestIdLogLabel: REQUEST_ID_LOG_LABEL })
  : undefined
// JSON lines on stdout, secrets redacted (app.ts loggerOptions).
const logger = pino(loggerOptions(config))
const app = Fastify({
  ...serverOptions(config, logger, tracing?.logController),
  // Bounded client timeouts (docs/reference/configuration.md#listening). Node checks the
  // headers and request timeouts every connectionsCheckingInterval (30 s by default): every
  // second here, so that a client sending its headers slowly is cut off near its time.
  http: { headersTimeout: config.SERVER_HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
  requestTimeout: config.SERVER_REQUEST_TIMEOUT_MS,
  keepAliveTimeout: config.SERVER_KEEP_ALIVE_TIMEOUT_MS,
  connectionTimeout: 60_000
})
// Past this many, Node closes a new connection at once.
app.server.maxConnections = config.SERVER_MAX_CONNECTIONS

let sandbox: Sandbox | undefined
let sandboxSettings: Record<string, string> | undefined
let builtInProfile: HubProfile | undefined
if (isSandboxMode(config)) {
  // Loaded only here, as ioredis is only with REDIS_URL: the sandbox and its seeded data are no part of a gateway in front of a hub.
  const sandboxModule = await import('./sandbox/index.ts')
  const { ProfileError, SANDBOX_PLATFORM_ID, sandboxEnv, sandboxProfile } = sandboxModule
  // The sandbox plays the hub profile the gateway reads, or, without one, its own (the documented
  // hub and its login): the gateway's reading of the file first, so that its problems are said in
  // the gateway's words.
  const played = config.UPSTREAM_PROFILE_FILE
  if (played !== undefined) orExit(() => loadProfileFile(played))
  sandbox = await sandboxModule.startSandbox({
    platformId: config.PLATFORM_ID ?? SANDBOX_PLATFORM_ID,
    ...(played === undefined ? {} : { profile: played })
  }).catch((error: unknown) => {
    if (!(error instanceof ProfileError)) throw error
    for (const problem of error.problems) {
      const where = `UPSTREAM_PROFILE_FILE (${played ?? ''})`
      process.stderr.write(`config error: ${where} ${problem} (the sandbox cannot play it)\n`)
    }
    process.exit(1)
  })
  builtInProfile = sandboxProfile()
  // One first line: the sandbox, and whether callers must authenticate
  // (docs/deployment.md#clients-and-keys).
  const authOff = config.CLIENTS_FILE === undefined
  app.log.warn({ sandbox: sandbox.url, authentication: authOff ? 'off' : 'on' },
    `no upstream configured: fronting the built-in sandbox at ${sandbox.url}` +
    (authOff ? '; client authentication is OFF (no CLIENTS_FILE): any caller may call every route' : ''))
  sandboxSettings = sandboxEnv(sandbox.url)
}
const gatewayConfig = orExit(() => resolveConfig(process.env, sandboxSettings === undefined ? {} : { sandbox: sandboxSettings }))
for (const { setting, host, message } of plainHttpWarnings(gatewayConfig)) app.log.warn({ setting, host }, message)
// What runs, in one short line (the hub profile's follows; the whole profile at debug level).
const started = startLine(gatewayConfig, sandbox !== undefined, VERSION)
app.log.info(started.fields, started.message)

// One line per variable that looks like a setting but is none (a typo is otherwise silent).
for (const { name, meant } of unknownSettings(process.env)) {
  app.log.warn({ variable: name, ...(meant === undefined ? {} : { meant }) }, `unknown setting ${name} is ignored${meant === undefined ? '' : `: did you mean ${meant}?`}`)
}

try {
  // Before the gateway's plugins and routes, which it must see to trace them.
  if (tracing !== undefined) await app.register(tracing.plugin)
  await app.register(gateway, {
    config: gatewayConfig,
    sandbox: sandbox !== undefined,
    ...(builtInProfile === undefined ? {} : { profile: builtInProfile })
  })
} catch (error) {
  // Problems only the gateway can see (CLIENTS_FILE missing or invalid): the same lines as loadConfig's.
  if (error instanceof ConfigError) {
    for (const problem of error.problems) process.stderr.write(`config error: ${problem}\n`)
    await sandbox?.close()
    process.exit(1)
  }
  throw error
}

let metricsServer: MetricsServer | undefined
closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
  if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
  else app.log.info({ signal }, 'closing')
  await app.close()
  await metricsServer?.close()
  await sandbox?.close()
  // Last: the spans of the requests that just finished are sent.
  await tracing?.shutdown()
})

// Unset HOST: loopback while authentication is off (config/listen.ts).
const listen = listenHost(config)
try {
  const address = await app.listen({ port: config.PORT, host: listen.host })
  if (listen.loopbackByDefault) app.log.info({ host: listen.host }, LOOPBACK_ADVICE)
  // Where to start: a wildcard listen address is not one a browser can open.
  const docs = `${address.replace(/\/\/(0\.0\.0\.0|\[::\])(?=:)/, '//localhost')}/docs`
  app.log.info({ docs }, `API documentation (Swagger UI): ${docs}`)
  if (config.METRICS_PORT !== undefined) {
    metricsServer = await startMetricsServer(app.metrics.registry, { host: listen.host, port: config.METRICS_PORT })
    app.log.info({ metrics: `${metricsServer.url}/metrics` }, `Prometheus metrics at ${metricsServer.url}/metrics`)
  }
  if (tracing !== undefined) app.log.info({ propagateUpstream: config.UPSTREAM_TRACE_PROPAGATION }, 'tracing on (OpenTelemetry, OTEL_* settings)')
} catch (error) {
  app.log.fatal({ err: error }, 'could not listen')
  await sandbox?.close()
  process.exit(1)
}
