import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Fastify, {
  type FastifyInstance, type FastifyServerOptions, type LogController
} from 'fastify'
import fp from 'fastify-plugin'
import type { LoggerOptions } from 'pino'
import { systemClock, type Clock } from './clock.ts'
import type { Config } from './config/load.ts'
import type { GatewayConfig } from './config/resolve.ts'
import { SECRET_SETTINGS } from './config/secret-files.ts'
import { trustProxyOf } from './config/trust-proxy.ts'
import { AccessLog } from './logging/access-log.ts'
import { requestLoggerFactory } from './logging/request-logger.ts'
import { serializeRequest } from './logging/request-serializer.ts'
import { BUILT_IN } from './profile/built-in.ts'
import { profileHeaderNames } from './profile/headers.ts'
import { resolveProfile } from './profile/resolve.ts'
import type { HubProfile } from './profile/schema.ts'
import audit from './plugins/audit.ts'
import auth from './plugins/auth.ts'
import bodyDepth from './plugins/body-depth.ts'
import clients from './plugins/clients.ts'
import errorHandler, { clientErrorHandler, frameworkErrors } from './plugins/error-handler.ts'
import events from './plugins/events.ts'
import hardening from './plugins/hardening.ts'
import hub from './plugins/hub.ts'
import idempotency from './plugins/idempotency.ts'
import lifecycle from './plugins/lifecycle.ts'
import lingeringClose from './plugins/lingering-close.ts'
import pressure from './plugins/pressure.ts'
import metrics from './plugins/metrics.ts'
import openapi from './plugins/swagger.ts'
import rateLimit from './plugins/rate-limit.ts'
import state from './plugins/state.ts'
import bookingRoutes from './routes/bookings.ts'
import eventRoutes from './routes/events.ts'
import healthRoutes from './routes/health.ts'
import lookupRoutes from './routes/lookups.ts'
import sp2Routes from './routes/sp2.ts'
import shipmentRoutes from './routes/shipments.ts'
import taxpayerRoutes from './routes/taxpayers.ts'
import { REQUEST_AJV_OPTIONS, requestValidatorFactory } from './schemas/validators.ts'
import { sharedSerializerFactory } from './schemas/serializers.ts'

declare module 'fastify' {
  interface FastifyInstance {
    config: GatewayConfig
  }
  interface FastifyRequest {
    /** The hub's status for this request's (last) hub call, for audit lines. */
    upstreamStatus?: number
  }
}

export interface AppOptions {
  config: GatewayConfig
  /** True when the upstream is the built-in sandbox. */
  sandbox: boolean
  /**
   * The hub profile when UPSTREAM_PROFILE_FILE is unset: the built-in
   * sandbox's, which models a login the hub's document does not publish
   * (default: the documented hub's).
   */
  profile?: HubProfile
  /**
   * What keeps time for TTLs, windows and renewals (default: the system clock; tests move their
   * own).
   */
  clock?: Clock
  /**
   * True: /openapi.json is the document of a gateway with authentication on
   * (the committed openapi/openapi.json), even where it is off. Otherwise a
   * sandbox without CLIENTS_FILE says in it that no key is needed.
   */
  productionDocument?: boolean
}

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version

/** The request id's name in log lines. */
export const REQUEST_ID_LOG_LABEL = 'requestId'

/**
 * docs/api.md#the-envelope-and-errors: a caller's id is kept when it is at most 128 of
 * `A-Za-z0-9-_.:`.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9\-_.:]{1,128}$/

export function requestIdOf (header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID()
}

/** Header paths pino must never print, whatever the log level. */
export function redactPaths (config: Config): string[] {
  // sec-websocket-protocol: browsers send their client key there (plugins/events.ts); and every
  // name the hub profile gives the hub's key and token.
  const headers = [...new Set([
    'authorization', 'x-upstream-authorization', 'sec-websocket-protocol',
    BUILT_IN.settings.apiKeyHeader, ...profileHeaderNames(config)
  ])]
  // Not under `req` and `res`: their serializers (serializeRequest, Fastify's `res`) write no
  // headers, and each path pino checks costs every request line a copy and a parse (redacting
  // `req.headers` and `res.headers` took a request line from about 2.5 to 7 µs).
  return [
    ...headers.map(h => `headers["${h}"]`),
    // Every secret setting (config/secret-files.ts), wherever the configuration is logged.
    ...SECRET_SETTINGS.map(setting => `config.${setting}`)
  ]
}

/**
 * The gateway's pino options: the level, the secrets redacted whatever the
 * level, and the request serializer. (Fastify adds its own `res` and `err`
 * serializers to the logger it is given or makes.)
 */
export function loggerOptions (config: Config): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    redact: redactPaths(config),
    serializers: { req: serializeRequest }
  }
}

/**
 * Fastify's own options for the gateway: request ids, validation, logging.
 * `logger` is a logger (server.ts makes it with pino), or options over
 * loggerOptions' from which Fastify makes one (tests: a stream and a level),
 * or false. `logController` replaces Fastify's request logging (tracing's).
 */
export function serverOptions (
  config: Config,
  logger: FastifyServerOptions['logger'] | FastifyServerOptions['loggerInstance'] = false,
  logController?: LogController
): FastifyServerOptions {
  const base: FastifyServerOptions = {
    requestIdHeader: false,
    // Tracing brings its own (telemetry/tracing.ts): the same lines, with the trace ids.
    logController: logController ?? new AccessLog({ requestIdLogLabel: REQUEST_ID_LOG_LABEL }),
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    bodyLimit: 64 * 1024,
    // A body with `__proto__` or `constructor.prototype` keys is refused (400), never parsed.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Bad percent-encoding or an overlong path segment: the envelope, like every other error.
    frameworkErrors,
    // Node's own refusals (a bad request line, header fields too large): the envelope as well.
    clientErrorHandler,
    // Unknown fields refused, every problem reported; bodies validated without type coercion.
    ajv: REQUEST_AJV_OPTIONS,
    // Response serializers compiled once per distinct schema, not per route and status
    // (schemas/serializers.ts).
    schemaController: {
      compilersFactory: {
        buildValidator: requestValidatorFactory(),
        buildSerializer: sharedSerializerFactory()
      }
    },
    routerOptions: { maxParamLength: 200 },
    // Which X-Forwarded-For to believe (TRUST_PROXY): request.ip, per-address limits and logs
    // follow it.
    trustProxy: trustProxyOf(config.TRUST_PROXY),
    // Requests arriving while closing get the envelope from plugins/lifecycle.ts instead.
    return503OnClosing: false
  }
  if (logger === false) return { ...base, logger: false }
  // Each request's child logger made only when something logs (logging/request-logger.ts).
  const logging = { ...base, childLoggerFactory: requestLoggerFactory }
  if (logger === true || logger === undefined || !('child' in (logger as object))) {
    const options = typeof logger === 'object' ? logger : {}
    return { ...logging, logger: { ...loggerOptions(config), ...options } }
  }
  return { ...logging, loggerInstance: logger as FastifyServerOptions['loggerInstance'] }
}

/**
 * The gateway as a plugin, registered in a readable order: config,
 * infrastructure, upstream client, routes. It never listens.
 */
async function gateway (app: FastifyInstance, options: AppOptions) {
  const { config, sandbox, clock = systemClock, productionDocument = false } = options
  app.decorate<GatewayConfig>('config', config)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })

  // The hub profile in force (UPSTREAM_PROFILE_FILE, or the built-in one; a problem in it stops
  // start-up): the hub client's addresses, reading and calls, and how the hub session is renewed.
  const builtIn = options.profile
  const profile = resolveProfile(config, builtIn === undefined ? {} : { builtIn })

  // Cheapest refusals first: closing, then load shedding.
  await app.register(lifecycle)
  // Whatever refuses a request below, the rest of its body is read and dropped, not reset.
  await app.register(lingeringClose)
  await app.register(pressure, { config })
  // The state the plugins below keep their counts, answers, events and hub session in.
  await app.register(state, {
    config,
    clock,
    loginRefreshes: profile.loginAddresses.refreshUrl !== undefined,
    loginTimeoutMs: profile.timeouts.headersMs
  })
  // Metrics early: the plugins below count into them.
  await app.register(metrics, { config })
  // Then who is calling (CLIENTS_FILE), the rate limiter keyed on it (which the
  // not-found handler of errorHandler uses), and the scope checks.
  await app.register(clients, { config, sandbox })
  await app.register(rateLimit, { config })
  await app.register(errorHandler)
  await app.register(hardening, { config })
  await app.register(bodyDepth)
  await app.register(auth)
  await app.register(idempotency)
  await app.register(audit)
  // Swagger UI's Authorize dialog says when no key is needed (the sandbox without CLIENTS_FILE).
  await app.register(openapi, {
    version: VERSION,
    keyless: !productionDocument && sandbox && config.CLIENTS_FILE === undefined
  })
  await app.register(events, { config })
  await app.register(hub, { config, profile, version: VERSION, clock })

  await app.register(healthRoutes, { sandbox })
  await app.register(lookupRoutes)
  await app.register(taxpayerRoutes)
  await app.register(shipmentRoutes)
  await app.register(sp2Routes)
  await app.register(bookingRoutes)
  await app.register(eventRoutes)
}

/**
 * Not encapsulated, so that the server and tests see its decorators (hub, events, metrics, config).
 */
export default fp(gateway, { name: 'gateway' })

/** Builds a ready app (tests, the OpenAPI script); the server adds listening and shutdown. */
export async function buildApp (
  options: AppOptions,
  logger?: FastifyServerOptions['logger'] | FastifyServerOptions['loggerInstance']
): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(options.config, logger))
  await app.register(gateway, options)
  await app.ready()
  return app
}
