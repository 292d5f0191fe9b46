import { existsSync } from 'node:fs'
import { Value } from 'typebox/value'
import { credentialProblems } from './credential-rules.ts'
import { expectedProblem } from './expected.ts'
import { removedSettingProblems } from './removed-settings.ts'
import { ConfigSchema, type RawConfig } from './schema.ts'
import { fromFileProblem, readSecretFiles } from './secret-files.ts'
import { trustProxyProblem } from './trust-proxy.ts'
import { misspeltSettingProblems } from './unknown-settings.ts'

export type Config = RawConfig & {
  /** UPSTREAM_ACCESS_TOKEN's file, which static credentials re-read when it changes (rotation). */
  UPSTREAM_ACCESS_TOKEN_FILE?: string
}

export class ConfigError extends Error {
  readonly problems: string[]
  constructor (problems: string[]) {
    super(`Invalid configuration:\n${problems.map(p => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

const NAMES = Object.keys(ConfigSchema.properties) as Array<keyof RawConfig>
/**
 * Whole-number settings. TypeBox's Value.Convert reads them with Number()
 * and truncates, so `1.5` would become 1 and `0x10` 16 without a word:
 * they are checked as written first.
 */
const INTEGER_NAMES = new Set<string>(
  NAMES.filter((name) => (ConfigSchema.properties[name] as { type?: unknown }).type === 'integer')
)
const DECIMAL_INTEGER = /^-?[0-9]+$/
/** Yes/no settings: `true` or `false` as written (Value.Convert would also take `1` or `TRUE`). */
const BOOLEAN_NAMES = new Set<string>(
  NAMES.filter((name) => (ConfigSchema.properties[name] as { type?: unknown }).type === 'boolean')
)

/**
 * Reads the gateway configuration from an environment map, validated once
 * against ConfigSchema. Throws ConfigError with one line per problem.
 * Only the variables ConfigSchema names are read, and NODE_ENV (the
 * platform's own: `production` refuses the sandbox unless SANDBOX=true);
 * empty values count as unset.
 */
export function loadConfig (env: Record<string, string | undefined>): Config {
  // Secrets given as files (X_FILE, config/secret-files.ts): read here, then checked as if X were
  // set.
  const files = readSecretFiles(env)
  const given: Record<string, string | undefined> = { ...env, ...files.values }
  // A removed setting still set: one line naming what says it now (config/removed-settings.ts).
  const problems: string[] = [...removedSettingProblems(env), ...files.problems]
  const input: Record<string, unknown> = {}
  for (const name of NAMES) {
    const raw = given[name]
    if (raw === undefined || raw.trim() === '') continue
    if (INTEGER_NAMES.has(name) && !DECIMAL_INTEGER.test(raw.trim())) {
      problems.push(`${name}: must be a whole number in decimal digits (such as 64)`)
    } else if (BOOLEAN_NAMES.has(name) && raw.trim() !== 'true' && raw.trim() !== 'false') {
      problems.push(`${name}: must be true or false`)
    } else {
      input[name] = raw.trim()
    }
  }
  const withDefaults = Value.Default(ConfigSchema, input) as Record<string, unknown>
  // Environment strings are converted to their types.
  const value = Value.Convert(ConfigSchema, withDefaults) as Record<string, unknown>
  for (const error of Value.Errors(ConfigSchema, value)) {
    const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.')
    problems.push(
      expectedProblem(path, error.keyword) ??
        `${path || 'configuration'}: ${error.message}${describeAllowed(error.params)}`
    )
  }
  // Value.Check narrows the type; Value.Errors above said why when it fails.
  if (problems.length > 0 || !Value.Check(ConfigSchema, value)) {
    throw new ConfigError(problems.map((p) => fromFileProblem(p, files.fromFile)))
  }
  // Kept as a path: static credentials re-read the file (config/secret-files.ts).
  const tokenFile = env.UPSTREAM_ACCESS_TOKEN_FILE?.trim() ?? ''
  const config: Config = tokenFile === ''
    ? value
    : { ...value, UPSTREAM_ACCESS_TOKEN_FILE: tokenFile }
  for (const name of ['UPSTREAM_HUB_URL', 'UPSTREAM_BASE_URL'] as const) {
    const url = config[name]
    if (url !== undefined && !URL.canParse(url)) {
      problems.push(`${name}: must be an absolute ` +
      'http(s) URL')
    }
  }
  const hub = config.UPSTREAM_HUB_URL !== undefined
  const base = config.UPSTREAM_BASE_URL !== undefined
  if (hub !== base) {
    problems.push(
      `${hub ? 'UPSTREAM_BASE_URL' : 'UPSTREAM_HUB_URL'}: must be set together with ` +
      `${hub ? 'UPSTREAM_HUB_URL' : 'UPSTREAM_BASE_URL'} (leave both unset for the built-in ` +
      'sandbox)'
    )
  }
  // A production container whose settings failed to mount must not serve seeded data with
  // authentication off.
  if (!hub && !base) {
    if (config.SANDBOX === false) {
      problems.push(
        'UPSTREAM_HUB_URL: is required with SANDBOX=false (set UPSTREAM_HUB_URL and ' +
        'UPSTREAM_BASE_URL)'
      )
    } else if (config.SANDBOX !== true && env.NODE_ENV === 'production') {
      problems.push(
        'UPSTREAM_HUB_URL: is required with NODE_ENV=production (set UPSTREAM_HUB_URL and ' +
        "UPSTREAM_BASE_URL, or SANDBOX=true to serve the built-in sandbox's seeded data)"
      )
    }
  } else if (config.SANDBOX === true) {
    problems.push(
      'SANDBOX: true fronts the built-in sandbox, which excludes UPSTREAM_HUB_URL and ' +
      'UPSTREAM_BASE_URL (unset one or the other)'
    )
  }
  if (config.TRUST_PROXY !== undefined) {
    const problem = trustProxyProblem(config.TRUST_PROXY)
    if (problem !== undefined) problems.push(problem)
  }
  if (hub && base) {
    for (const name of ['UPSTREAM_API_KEY', 'PLATFORM_ID'] as const) {
      if (config[name] === undefined) {
        problems.push(`${name}: is required when an upstream is ` +
        'configured')
      }
    }
    if (
      config.UPSTREAM_CREDENTIALS === 'static' &&
      config.UPSTREAM_ACCESS_TOKEN === undefined &&
      config.UPSTREAM_ACCESS_TOKEN_FILE === undefined
    ) {
      problems.push(
        'UPSTREAM_ACCESS_TOKEN: is required when an upstream is configured (or ' +
        'UPSTREAM_ACCESS_TOKEN_FILE, or UPSTREAM_CREDENTIALS=login|forward)'
      )
    }
  }
  // The hub account of login mode (config/credential-rules.ts).
  problems.push(...credentialProblems(config, hub && base))
  if (config.SERVER_HEADERS_TIMEOUT_MS > config.SERVER_REQUEST_TIMEOUT_MS) {
    problems.push(
      'SERVER_HEADERS_TIMEOUT_MS: must be at most SERVER_REQUEST_TIMEOUT_MS ' +
      `(${config.SERVER_REQUEST_TIMEOUT_MS})`
    )
  }
  if (
    config.METRICS_PORT !== undefined &&
    config.METRICS_PORT !== 0 &&
    config.METRICS_PORT === config.PORT
  ) {
    problems.push(
      `METRICS_PORT: must differ from PORT (${config.PORT}); leave it unset to serve /metrics on ` +
      'the API port'
    )
  }
  problems.push(...redisProblems(config))
  problems.push(...misspeltSettingProblems(env))
  if (problems.length > 0) {
    throw new ConfigError(problems.map((p) => fromFileProblem(p, files.fromFile)))
  }
  return config
}

/** The rules between the Redis settings. */
function redisProblems (config: Config): string[] {
  const problems: string[] = []
  if (config.REDIS_SENTINELS !== undefined && config.REDIS_URL === undefined) {
    problems.push(
      "REDIS_URL: is required with REDIS_SENTINELS (for the master's user, password, database " +
      'and scheme; its host is not used), e.g. redis://gateway:PASSWORD@mymaster'
    )
  }
  for (const name of ['REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD'] as const) {
    if (config[name] !== undefined && config.REDIS_SENTINELS === undefined) {
      problems.push(`${name}: ` +
      'is used only with REDIS_SENTINELS')
    }
  }
  if (config.REDIS_REPLICA_ACK_TIMEOUT_MS >= config.REDIS_COMMAND_TIMEOUT_MS) {
    problems.push(
      'REDIS_REPLICA_ACK_TIMEOUT_MS: must be below REDIS_COMMAND_TIMEOUT_MS ' +
      `(${config.REDIS_COMMAND_TIMEOUT_MS}), which bounds the wait too`
    )
  }
  return problems
}

/** `host:port,host:port` (REDIS_SENTINELS) as addresses; brackets of an IPv6 address removed. */
export function sentinelAddresses (list: string): Array<{ host: string, port: number }> {
  return list.split(',').map(item => item.trim()).filter(item => item !== '').map(item => {
    const colon = item.lastIndexOf(':')
    return {
      host: item.slice(0, colon).replace(/^\[(.*)\]$/, '$1'),
      port: Number(item.slice(colon + 1))
    }
  })
}

function describeAllowed (params: unknown): string {
  if (
    typeof params === 'object' &&
    params !== null &&
    'allowedValues' in params &&
    Array.isArray(params.allowedValues)
  ) {
    return `: ${params.allowedValues.join(', ')}`
  }
  return ''
}

/** Loads `.env` into process.env when the file exists (values already set win). */
export function loadEnvFile (path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path)
}

export function isSandboxMode (config: Config): boolean {
  return config.UPSTREAM_HUB_URL === undefined && config.UPSTREAM_BASE_URL === undefined
}
