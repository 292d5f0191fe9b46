import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ANY_HOST } from '../../src/config/listen.ts'
import { ConfigError, isSandboxMode, loadConfig, type Config } from '../../src/config/load.ts'
import { ConfigSchema } from '../../src/config/schema.ts'
import {
  SECRET_FILE_SETTINGS, SECRET_SETTINGS as GATEWAY_SECRETS
} from '../../src/config/secret-files.ts'
import { loadProfileFile } from '../../src/profile/load.ts'
import type { ComposeFile, ComposeService } from './compose.ts'
import {
  backends,
  haproxyTimeout,
  healthCheck,
  servers,
  type HaproxySection
} from '../helpers/haproxy.ts'
import type { KubeObject } from './kustomize.ts'

/**
 * The checks that keep deploy/ from drifting away from the gateway. Each
 * returns its problems (none: the deployment holds); test/deploy/deploy.test.ts
 * runs each on the real files and on a copy with one mistake put in.
 */

/** What the Compose deployment is made of. */
export interface ComposeDeployment {
  /** Text of the repository's Dockerfile. */
  dockerfile: string
  /** deploy/compose.yaml, interpolated with deploy/hub.env.example. */
  compose: ComposeFile
  /** deploy/compose.demo.yaml, interpolated likewise. */
  demo: ComposeFile
  haproxy: HaproxySection[]
  /**
   * The directory deploy/init-secrets.sh wrote the secret files into, with
   * what an operator fills in: Compose's `./secrets/<name>` files are read
   * from there.
   */
  secretsDir: string
  /** Whether git ignores a path of the repository. */
  ignored: (path: string) => boolean
}

/**
 * Settings whose values are secrets (the gateway's list): never written in a
 * manifest, nor passed as variables; mounted as files and named by their
 * *_FILE settings. REDIS_URL is one only with a password in it.
 */
export const SECRET_SETTINGS = GATEWAY_SECRETS
/**
 * Example values of the secrets a Kubernetes manifest mounts as files, to load the configuration as
 * a replica would.
 */
const SECRET_EXAMPLES: Record<typeof SECRET_SETTINGS[number], string> = {
  UPSTREAM_API_KEY: 'example-hub-key',
  UPSTREAM_ACCESS_TOKEN: 'example-hub-token',
  UPSTREAM_LOGIN_USERNAME: 'example-user',
  UPSTREAM_LOGIN_PASSWORD: 'example-password',
  REDIS_URL: 'rediss://gateway:example-redis-password@redis.example.internal:6380',
  REDIS_SENTINEL_PASSWORD: 'example-sentinel-password'
}
/** A URL with a password in it. */
const CREDENTIALS_IN_URL = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i

type Env = Record<string, string>

function isSetting (name: string): boolean {
  return Object.hasOwn(ConfigSchema.properties, name) || SECRET_FILE_SETTINGS.includes(name) ||
    name === 'NODE_ENV' || name === 'NODE_OPTIONS' || /^OTEL_[A-Z0-9_]+$/.test(name)
}

function schemaDefault (name: keyof typeof ConfigSchema.properties): number {
  return Number((ConfigSchema.properties[name] as { default?: unknown }).default)
}

/**
 * A setting in milliseconds as a replica reads it: its value in `env`, else the schema's default.
 */
function milliseconds (
  env: Env,
  name:
    | 'SHUTDOWN_GRACE_MS'
    | 'SERVER_KEEP_ALIVE_TIMEOUT_MS'
    | 'UPSTREAM_DEADLINE_MS'
    | 'EVENTS_PING_INTERVAL_MS'
): number {
  const value = env[name]
  return value === undefined || value === '' ? schemaDefault(name) : Number(value)
}

/** The repository: what the image holds of deploy/profiles/ is its files. */
const ROOT = new URL('../../', import.meta.url)

/** A *_FILE setting naming a secret's file (UPSTREAM_PROFILE_FILE's, the hub profile, is none). */
function isSecretFile (name: string): boolean {
  return name.endsWith('_FILE') && name !== 'UPSTREAM_PROFILE_FILE'
}

/**
 * The hub profile a replica reads: one the image ships (deploy/profiles/,
 * under its WORKDIR), which must load as the gateway loads it.
 */
function profileFileProblems (config: Config): string[] {
  const file = config.UPSTREAM_PROFILE_FILE
  if (file === undefined) return []
  if (!/^deploy\/profiles\/[a-z0-9-]+\.json$/.test(file)) {
    return [`UPSTREAM_PROFILE_FILE: ${file} is not a profile the image ships (deploy/profiles/)`]
  }
  try {
    loadProfileFile(fileURLToPath(new URL(file, ROOT)))
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

function loadProblems (env: Env): { config?: Config, problems: string[] } {
  try {
    const config = loadConfig(env)
    return { config, problems: profileFileProblems(config) }
  } catch (error) {
    if (error instanceof ConfigError) return { problems: error.problems }
    throw error
  }
}

// ---------------------------------------------------------------------------
// The image

/** The runtime stage of a Dockerfile: its ENV and EXPOSE. */
export function imageOf (dockerfile: string): { env: Env, exposed: number[] } {
  const joined = dockerfile.replace(/\\\r?\n/g, ' ')
  const lines = joined.split('\n').map(line => line.trim())
  const lastFrom = lines.findLastIndex(line => /^FROM\s/i.test(line))
  const env: Env = {}
  const exposed: number[] = []
  for (const line of lines.slice(lastFrom)) {
    const [instruction, ...rest] = line.split(/\s+/)
    if (instruction?.toUpperCase() === 'ENV') {
      for (const pair of rest) {
        const at = pair.indexOf('=')
        if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1)
      }
    }
    if (instruction?.toUpperCase() === 'EXPOSE') {
      exposed.push(...rest.map((port) => Number(port.split('/')[0])))
    }
  }
  return { env, exposed }
}

/**
 * The port the gateway listens on in the image: EXPOSE and PORT must agree;
 * and on every interface (HOST=0.0.0.0), whatever CLIENTS_FILE says: unset,
 * HOST is loopback without one (config/listen.ts), a container's own
 * loopback, which a published port does not reach.
 */
export function imagePortProblems (dockerfile: string): string[] {
  const { env, exposed } = imageOf(dockerfile)
  if (exposed.length !== 1) return [`Dockerfile: EXPOSE names ${exposed.length} ports, not one`]
  if (String(exposed[0]) !== env.PORT) {
    return [`Dockerfile: EXPOSE ${exposed[0]} but ENV ` +
    `PORT=${env.PORT}`]
  }
  if (env.HOST !== ANY_HOST) {
    return [
      `Dockerfile: ENV HOST=${env.HOST ?? '(unset)'}, not ${ANY_HOST}: a container without ` +
      'CLIENTS_FILE (docker run -e SANDBOX=true) would listen on its own loopback'
    ]
  }
  return []
}

// ---------------------------------------------------------------------------
// Compose

/**
 * The services built from the repository's Dockerfile that run the image's command: the gateway
 * replicas.
 */
export function gatewayServices (compose: ComposeFile): Array<[string, ComposeService]> {
  return Object.entries(compose.services).filter(
    ([, service]) => service.build !== undefined && service.command === undefined
  )
}

function serviceEnv (service: ComposeService | undefined): Env {
  return Object.fromEntries(
    Object.entries(service?.environment ?? {}).map(([name, value]) => [
      name,
      value === null ? '' : String(value)
    ])
  )
}

/**
 * The settings a replica's process sees: the image's ENV and the service's environment, with an
 * override's on top.
 */
function replicaEnv (d: ComposeDeployment, name: string, override?: ComposeFile): Env {
  return {
    ...imageOf(d.dockerfile).env,
    ...serviceEnv(d.compose.services[name]),
    ...serviceEnv(override?.services[name])
  }
}

/**
 * A replica's settings with each path of a mounted secret file (a *_FILE
 * setting) put where deploy/init-secrets.sh wrote that file, so that the
 * gateway's loader reads them as the replica would. A path no secret is
 * mounted at stays as it is (and cannot be read).
 */
function withSecretFiles (d: ComposeDeployment, name: string, env: Env): Env {
  const service = d.compose.services[name]
  if (service === undefined) return env
  const onHost = new Map(
    [...secretTargets(service)].map(([source, target]) => [
      target,
      d.compose.secrets?.[source]?.file
    ])
  )
  return Object.fromEntries(Object.entries(env).map(([key, value]) => {
    const file = isSecretFile(key) ? onHost.get(value) : undefined
    return [key, file === undefined ? value : join(d.secretsDir, basename(file))]
  }))
}

export function composeEnvNameProblems (d: ComposeDeployment): string[] {
  const places: Array<[string, string[]]> = []
  for (const [name, service] of gatewayServices(d.compose)) {
    places.push(['compose.yaml ' +
    `${name}`, Object.keys(serviceEnv(service))])
  }
  for (const [name, service] of Object.entries(d.demo.services)) {
    places.push(['compose.demo.yaml ' + `${name}`, Object.keys(serviceEnv(service))])
  }
  return places.flatMap(([where, names]) =>
    names
      .filter((name) => !isSetting(name))
      .map((name) => `${where}: ${name} is no setting of the gateway (src/config/schema.ts)`)
  )
}

export function composeConfigProblems (d: ComposeDeployment): string[] {
  const problems: string[] = []
  const demoed = Object.keys(d.demo.services)
  for (const [name] of gatewayServices(d.compose)) {
    const hub = loadProblems(withSecretFiles(d, name, replicaEnv(d, name)))
    problems.push(...hub.problems.map(p => `compose.yaml ${name}: ${p}`))
    if (hub.config !== undefined && isSandboxMode(hub.config)) {
      problems.push(
        `compose.yaml ${name}: runs on the sandbox, not the hub of deploy/hub.env.example`
      )
    }
    if (!demoed.includes(name)) {
      problems.push(`compose.demo.yaml: ${name} is not set to the sandbox`)
      continue
    }
    const demo = loadProblems(withSecretFiles(d, name, replicaEnv(d, name, d.demo)))
    problems.push(...demo.problems.map(p => `compose.demo.yaml ${name}: ${p}`))
    if (
      demo.config !== undefined &&
      (!isSandboxMode(demo.config) || demo.config.SANDBOX !== true)
    ) {
      problems.push('compose.demo.yaml ' + `${name}: not on the sandbox`)
    }
    for (const setting of [
      'UPSTREAM_API_KEY',
      'UPSTREAM_ACCESS_TOKEN_FILE',
      'UPSTREAM_LOGIN_USERNAME',
      'UPSTREAM_LOGIN_PASSWORD'
    ] as const) {
      if (demo.config?.[setting] !== undefined) {
        problems.push(
          `compose.demo.yaml ${name}: ${setting} is set: the sandbox would refuse the hub's ` +
          'credentials'
        )
      }
    }
  }
  for (const name of demoed) {
    if (!(name in d.compose.services)) {
      problems.push(`compose.demo.yaml: no service ${name} in ` +
      'compose.yaml')
    }
  }
  return problems
}

export function composePortProblems (d: ComposeDeployment): string[] {
  const problems = imagePortProblems(d.dockerfile)
  const gateways = gatewayServices(d.compose)
  const ports = new Set<string>()
  for (const [name, service] of gateways) {
    const port = replicaEnv(d, name).PORT ?? ''
    ports.add(port)
    if (!(service.expose ?? []).map(String).includes(port)) {
      problems.push('compose.yaml ' +
      `${name}: does not expose its port ${port}`)
    }
  }
  for (const backend of backends(d.haproxy)) {
    const targets = servers(backend)
    const names = targets.map(server => server.host).sort()
    const expected = gateways.map(([name]) => name).sort()
    if (names.join() !== expected.join()) {
      problems.push(
        `haproxy.cfg ${backend.name}: servers ${names.join(', ')}, but the replicas are ` +
        `${expected.join(', ')}`
      )
    }
    for (const server of targets) {
      if (!ports.has(String(server.port))) {
        problems.push(
          `haproxy.cfg ${backend.name}: server ${server.name} on port ${server.port}, but the ` +
          `gateway listens on ${[...ports].join(', ')}`
        )
      }
    }
  }
  return problems
}

export function composeShutdownProblems (d: ComposeDeployment): string[] {
  return gatewayServices(d.compose).flatMap(([name, service]) => {
    const grace = milliseconds(replicaEnv(d, name), 'SHUTDOWN_GRACE_MS')
    const stop = composeDuration(service.stop_grace_period ?? '10s')
    return stop > grace
      ? []
      : [
          `compose.yaml ${name}: stop_grace_period ` +
          `${service.stop_grace_period ?? '10s (the default)'} is not above SHUTDOWN_GRACE_MS ` +
          `${grace}`
        ]
  })
}

/** A Compose duration (`15s`, `1m30s`, `500ms`), in milliseconds. */
export function composeDuration (value: string): number {
  const parts = [...value.matchAll(/([0-9.]+)(ms|us|h|m|s)/g)]
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== value) {
    throw new Error(`${value} ` + 'is not a Compose duration')
  }
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001 }
  return parts.reduce((sum, part) => sum + Number(part[1]) * (unit[part[2] ?? 's'] ?? 0), 0)
}

/**
 * HAProxy against the replicas' timeouts: it must close an idle connection
 * before the gateway does, wait for an answer as long as the gateway may
 * spend on the hub, and never cut a WebSocket the gateway keeps alive.
 */
export function balancerTimeoutProblems (d: ComposeDeployment): string[] {
  const problems: string[] = []
  const envs = gatewayServices(d.compose).map(([name]) => replicaEnv(d, name))
  const keepAlive = Math.min(...envs.map(env => milliseconds(env, 'SERVER_KEEP_ALIVE_TIMEOUT_MS')))
  const deadline = Math.max(...envs.map(env => milliseconds(env, 'UPSTREAM_DEADLINE_MS')))
  const ping = Math.max(...envs.map(env => milliseconds(env, 'EVENTS_PING_INTERVAL_MS')))
  for (const backend of backends(d.haproxy)) {
    const server = haproxyTimeout(d.haproxy, 'server', backend)
    const tunnel = haproxyTimeout(d.haproxy, 'tunnel', backend) ?? server
    if (server === undefined) problems.push(`haproxy.cfg ${backend.name}: no timeout server`)
    else {
      if (server >= keepAlive) {
        problems.push(
          `haproxy.cfg ${backend.name}: timeout server ${server} ms is not below the gateway's ` +
          `SERVER_KEEP_ALIVE_TIMEOUT_MS ${keepAlive}`
        )
      }
      if (server <= deadline) {
        problems.push(
          `haproxy.cfg ${backend.name}: timeout server ${server} ms is not above ` +
          `UPSTREAM_DEADLINE_MS ${deadline}`
        )
      }
    }
    if (tunnel === undefined || tunnel <= ping) {
      problems.push(
        `haproxy.cfg ${backend.name}: timeout tunnel ${tunnel ?? 'unset'} is not above ` +
        `EVENTS_PING_INTERVAL_MS ${ping}: live WebSockets would be cut`
      )
    }
  }
  return problems
}

/**
 * HAProxy's health check: the readiness route, expecting 200; the caller's address passed on when
 * the replicas believe it.
 */
export function balancerCheckProblems (
  d: ComposeDeployment,
  hasRoute: (path: string) => boolean
): string[] {
  const problems: string[] = []
  const list = backends(d.haproxy)
  if (list.length === 0) problems.push('haproxy.cfg: no backend')
  for (const backend of list) {
    const check = healthCheck(backend)
    if (check === undefined) {
      problems.push(`haproxy.cfg ${backend.name}: no HTTP health check (option httpchk)`)
      continue
    }
    if (check.method !== 'GET' || check.path !== '/health/ready') {
      problems.push(
        `haproxy.cfg ${backend.name}: the health check asks ${check.method} ${check.path}, not ` +
        'GET /health/ready'
      )
    }
    if (!hasRoute(check.path)) {
      problems.push(`haproxy.cfg ${backend.name}: the gateway has no ` +
      `route GET ${check.path}`)
    }
    if (check.expect !== 'status 200') {
      problems.push(
        `haproxy.cfg ${backend.name}: the health check expects ${check.expect ?? 'any answer'}, ` +
        'not status 200'
      )
    }
    const checkedByDefault = backend.lines.some(
      (words) => words[0] === 'default-server' && words.includes('check')
    )
    for (const words of backend.lines.filter((words) => words[0] === 'server')) {
      if (!checkedByDefault && !words.includes('check')) {
        problems.push(
          `haproxy.cfg ${backend.name}: server ${words[1] ?? '?'} is not health-checked`
        )
      }
    }
  }
  // A retry after a connection closed without an answer is safe for a lookup only: a write may have
  // reached the hub.
  const retryOn = d.haproxy.flatMap((section) =>
    section.lines.filter((words) => words[0] === 'retry-on').flatMap((words) => words.slice(1))
  )
  if (retryOn.some((condition) => condition !== 'conn-failure' && condition !== 'none')) {
    for (const backend of list) {
      if (
        !backend.lines.some(
          (words) =>
            words.join(' ') === 'http-request disable-l7-retry unless METH_GET || METH_HEAD'
        )
      ) {
        problems.push(
          `haproxy.cfg ${backend.name}: retry-on ${retryOn.join(' ')} would send a POST twice ` +
          '(http-request disable-l7-retry unless METH_GET || METH_HEAD)'
        )
      }
    }
  }
  const forwards = d.haproxy.some((section) =>
    section.lines.some((words) => words[0] === 'option' && words[1] === 'forwardfor')
  )
  for (const [name] of gatewayServices(d.compose)) {
    if ((replicaEnv(d, name).TRUST_PROXY ?? '') !== '' && !forwards) {
      problems.push(
        `compose.yaml ${name}: TRUST_PROXY is set but HAProxy sends no X-Forwarded-For (option ` +
        'forwardfor)'
      )
    }
  }
  return problems
}

/** Where a service mounts each of its secrets. */
function secretTargets (service: ComposeService): Map<string, string> {
  return new Map((service.secrets ?? []).map(entry => {
    const { source, target } =
      typeof entry === 'string' ? { source: entry, target: undefined } : entry
    return [
      source,
      target === undefined
        ? `/run/secrets/${source}`
        : target.startsWith('/')
          ? target
          : `/run/secrets/${target}`
    ]
  }))
}

export function composeSecretProblems (d: ComposeDeployment): string[] {
  const problems: string[] = []
  for (const [name, secret] of Object.entries(d.compose.secrets ?? {})) {
    const { file, ...other } = secret
    if (file === undefined || Object.keys(other).length > 0) {
      problems.push(
        `compose.yaml: secret ${name} is not a file alone (${Object.keys(secret).join(', ')})`
      )
    } else if (!d.ignored(`deploy/${file.replace(/^\.\//, '')}`)) {
      problems.push('compose.yaml: ' +
      `the file of secret ${name} (${file}) is not ignored by git`)
    }
  }
  for (const [name, service] of Object.entries(d.compose.services)) {
    const env = serviceEnv(service)
    // REDIS_URL without a password is an address (the URL check below catches one with a password).
    for (const setting of SECRET_SETTINGS) {
      if (setting !== 'REDIS_URL' && (env[setting] ?? '') !== '') {
        problems.push('compose.yaml ' +
        `${name}: ${setting} is written inline`)
      }
    }
    for (const value of [...Object.values(env), ...(service.command ?? [])]) {
      if (CREDENTIALS_IN_URL.test(value)) {
        problems.push(`compose.yaml ${name}: a URL with a ` +
        'password is written inline')
      }
    }
    if ((service.command ?? []).some((word) => /^--(requirepass|masterauth)$/.test(word))) {
      problems.push('compose.yaml ' + `${name}: a password on the command line`)
    }
  }
  for (const [name, service] of gatewayServices(d.compose)) {
    const targets = [...secretTargets(service).values()]
    const env = replicaEnv(d, name)
    // The hub's key and the clients always; every other secret's file that is set (login mode's
    // account, Redis's URL).
    const set = Object.keys(env).filter(key => isSecretFile(key) && env[key] !== '')
    const files = new Set(['UPSTREAM_API_KEY_FILE', 'CLIENTS_FILE', ...set])
    for (const setting of files) {
      if (!targets.includes(env[setting] ?? '')) {
        problems.push(
          `compose.yaml ${name}: ${setting}=${env[setting] ?? ''} is not a mounted secret`
        )
      }
    }
  }
  // Compose refuses to start without the file of each secret it mounts.
  for (const [name, secret] of Object.entries(d.compose.secrets ?? {})) {
    const file = secret.file === undefined ? undefined : join(d.secretsDir, basename(secret.file))
    if (file !== undefined && !existsSync(file)) {
      problems.push(
        `compose.yaml: deploy/init-secrets.sh does not write the file of secret ${name} ` +
        `(${secret.file ?? ''})`
      )
    }
  }
  return problems
}

/**
 * /metrics off the balancer: every replica serves it on METRICS_PORT, a
 * listener of its own that HAProxy does not forward to, so that the API port
 * answers it 404.
 */
export function composeMetricsProblems (d: ComposeDeployment): string[] {
  const problems: string[] = []
  const balanced = backends(d.haproxy).flatMap((backend) =>
    servers(backend).map((server) => ({ backend: backend.name, server }))
  )
  for (const [name, service] of gatewayServices(d.compose)) {
    const env = replicaEnv(d, name)
    const metrics = env.METRICS_PORT ?? ''
    if (metrics === '' || metrics === '0') {
      problems.push(
        `compose.yaml ${name}: no METRICS_PORT: /metrics is served on the API port, through ` +
        'HAProxy, to anyone'
      )
      continue
    }
    if (metrics === env.PORT) {
      problems.push(`compose.yaml ${name}: METRICS_PORT is the API ` +
      `port ${env.PORT}`)
    }
    if (!(service.expose ?? []).map(String).includes(metrics)) {
      problems.push('compose.yaml ' +
      `${name}: does not expose METRICS_PORT ${metrics}`)
    }
    for (const { backend, server } of balanced.filter(
      ({ server }) => server.host === name && String(server.port) === metrics
    )) {
      problems.push(
        `haproxy.cfg ${backend}: server ${server.name} forwards to METRICS_PORT ${metrics}`
      )
    }
  }
  return problems
}

/**
 * The gateway's Redis function library is loaded before the replicas start,
 * by a one-shot service of the same image with the loading user's URL as a
 * secret; the replicas wait for it to finish.
 */
export function composeFunctionsProblems (d: ComposeDeployment): string[] {
  const loaders = Object.entries(d.compose.services).filter(
    ([, service]) =>
      service.build !== undefined && (service.command ?? [])[1] === 'dist/redis-functions.js'
  )
  if (loaders.length !== 1) {
    return [`compose.yaml: ${loaders.length} services run ` +
    'dist/redis-functions.js, not one']
  }
  const [[loader, service]] = loaders as [[string, ComposeService]]
  const problems: string[] = []
  const command = service.command ?? []
  const file = command[command.indexOf('--load') + 1]
  if (!command.includes('--load') || ![...secretTargets(service).values()].includes(file ?? '')) {
    problems.push('compose.yaml ' + `${loader}: does not --load from a mounted secret`)
  }
  if (service.restart !== 'no') {
    problems.push(`compose.yaml ${loader}: restart is not "no" (it ` +
    'runs once)')
  }
  for (const [name, replica] of gatewayServices(d.compose)) {
    const condition = ((replica.depends_on ?? {}) as Record<string, { condition?: string }>)[loader]
      ?.condition
    if (condition !== 'service_completed_successfully') {
      problems.push(
        `compose.yaml ${name}: does not wait for ${loader} to complete (depends_on condition ` +
        'service_completed_successfully)'
      )
    }
  }
  return problems
}

/** The shared Redis: its data persisted, its users from a secret file, nothing evicted. */
export function composeRedisProblems (d: ComposeDeployment): string[] {
  const redis = Object.entries(d.compose.services).find(
    ([, service]) => (service.command ?? [])[0] === 'redis-server'
  )
  if (redis === undefined) return ['compose.yaml: no redis-server service']
  const [name, service] = redis
  const command = service.command ?? []
  const option = (flag: string) => command[command.indexOf(flag) + 1]
  const problems: string[] = []
  if (!command.includes('--appendonly') || option('--appendonly') !== 'yes') {
    problems.push(
      `compose.yaml ${name}: appendonly is not yes: a restart would forget idempotency keys`
    )
  }
  if (option('--maxmemory-policy') !== 'noeviction') {
    problems.push(
      `compose.yaml ${name}: maxmemory-policy is not noeviction: an idempotent answer could be ` +
      'evicted'
    )
  }
  if (
    !command.includes('--aclfile') ||
    ![...secretTargets(service).values()].includes(option('--aclfile') ?? '')
  ) { problems.push(`compose.yaml ${name}: its users do not come from a secret file (--aclfile)`) }
  if (!(service.volumes ?? []).some((volume) => volume.endsWith(':/data'))) {
    problems.push('compose.yaml ' + `${name}: /data is not a volume`)
  }
  return problems
}

export function composeHardeningProblems (d: ComposeDeployment): string[] {
  const problems: string[] = []
  const gateways = gatewayServices(d.compose)
  if (gateways.length < 2) {
    problems.push(`compose.yaml: ${gateways.length} gateway replica(s), ` +
    'not two or more')
  }
  for (const [name, service] of Object.entries(d.compose.services)) {
    if (service.read_only !== true) {
      problems.push(`compose.yaml ${name}: the root filesystem ` +
      'is writable')
    }
    if (!(service.cap_drop ?? []).includes('ALL')) {
      problems.push(`compose.yaml ${name}: ` +
      'capabilities are not dropped')
    }
    if (
      !(service.security_opt ?? []).some((option) => /^no-new-privileges(:true)?$/.test(option))
    ) {
      problems.push('compose.yaml ' + `${name}: no-new-privileges is not set`)
    }
  }
  return problems
}

// ---------------------------------------------------------------------------
// Kubernetes

type Json = Record<string, unknown>
interface Container {
  name: string
  ports?: Array<{ name?: string; containerPort: number }>
  env?: Array<{
    name: string
    value?: string
    valueFrom?: {
      secretKeyRef?: { name: string; key: string }
      configMapKeyRef?: { name: string; key: string }
    }
  }>
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>
  volumeMounts?: Array<{ name: string; mountPath: string; subPath?: string }>
  readinessProbe?: Probe
  livenessProbe?: Probe
  startupProbe?: Probe
  lifecycle?: { preStop?: { sleep?: { seconds: number }; exec?: { command?: string[] } } }
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> }
  securityContext?: Json & { capabilities?: { drop?: string[]; add?: string[] } }
}
interface Probe { httpGet?: { path?: string, port: number | string } }
interface PodSpec {
  containers: Container[]
  volumes?: Array<{ name: string, secret?: Json, configMap?: Json }>
  securityContext?: Json & { seccompProfile?: { type?: string } }
  terminationGracePeriodSeconds?: number
  automountServiceAccountToken?: boolean
  enableServiceLinks?: boolean
}
interface Workload { object: KubeObject, labels: Record<string, string>, pod: PodSpec }

function workloads (objects: KubeObject[]): Workload[] {
  return objects.filter(o => o.kind === 'Deployment').map(object => {
    const template = (
      object.spec as { template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec } }
    ).template
    return { object, labels: template.metadata?.labels ?? {}, pod: template.spec }
  })
}

function byKind (objects: KubeObject[], kind: string): KubeObject[] {
  return objects.filter(o => o.kind === kind)
}

function name (o: KubeObject): string {
  return `${o.kind}/${o.metadata.name}`
}

/**
 * The container's settings: its ConfigMaps' data, then its own env (secret
 * references as example values); a secret given as the file of a mounted
 * Secret (X_FILE) is put in as an example value of X, since the files exist
 * only in the cluster.
 */
function containerEnv (objects: KubeObject[], container: Container): Env {
  const env = declaredEnv(objects, container)
  for (const setting of SECRET_SETTINGS) {
    const file = env[`${setting}_FILE`]
    if (file === undefined || file === '' || (env[setting] ?? '') !== '') continue
    env[setting] = SECRET_EXAMPLES[setting]
    delete env[`${setting}_FILE`]
  }
  return env
}

/**
 * The container's settings as declared: its ConfigMaps' data, then its own env (secret references
 * as example values).
 */
function declaredEnv (objects: KubeObject[], container: Container): Env {
  const env: Env = {}
  for (const source of container.envFrom ?? []) {
    const map = byKind(objects, 'ConfigMap').find(
      (o) => o.metadata.name === source.configMapRef?.name
    )
    Object.assign(env, (map?.data ?? {}) as Env)
  }
  for (const entry of container.env ?? []) {
    env[entry.name] =
      entry.value ??
      (entry.valueFrom?.secretKeyRef !== undefined
        ? (SECRET_EXAMPLES[entry.name as (typeof SECRET_SETTINGS)[number]] ?? 'example')
        : '')
  }
  return env
}

function podEnv (objects: KubeObject[], dockerfile: string, container: Container): Env {
  return { ...imageOf(dockerfile).env, ...containerEnv(objects, container) }
}

export function kubernetesEnvNameProblems (objects: KubeObject[]): string[] {
  const problems: string[] = []
  for (const map of byKind(objects, 'ConfigMap')) {
    for (const key of Object.keys((map.data ?? {}) as Env)) {
      if (!isSetting(key)) {
        problems.push(`${name(map)}: ${key} is no setting of the gateway ` +
        '(src/config/schema.ts)')
      }
    }
  }
  for (const { object, pod } of workloads(objects)) {
    for (const container of pod.containers) {
      for (const entry of container.env ?? []) {
        if (!isSetting(entry.name)) {
          problems.push(
            `${name(object)} ${container.name}: ${entry.name} is no setting of the gateway`
          )
        }
      }
      for (const source of container.envFrom ?? []) {
        if (source.secretRef !== undefined) {
          problems.push(
            `${name(object)} ${container.name}: envFrom a Secret names no variable, so it cannot ` +
            'be checked: use env with secretKeyRef'
          )
        } else if (
          !byKind(objects, 'ConfigMap').some((o) => o.metadata.name === source.configMapRef?.name)
        ) {
          problems.push(
            `${name(object)} ${container.name}: envFrom ConfigMap ` +
            `${source.configMapRef?.name ?? '?'} is not in the manifests`
          )
        }
      }
    }
  }
  return problems
}

/**
 * The settings each container gets, loaded as the gateway loads them (NODE_ENV=production from the
 * image).
 */
export function kubernetesConfigProblems (objects: KubeObject[], dockerfile: string): string[] {
  return workloads(objects).flatMap(({ object, pod }) =>
    pod.containers.flatMap((container) =>
      loadProblems(podEnv(objects, dockerfile, container)).problems.map(
        (p) => `${name(object)} ${container.name}: ${p}`
      )
    )
  )
}

function portNumber (container: Container, port: number | string | undefined): number | undefined {
  return typeof port === 'number'
    ? port
    : container.ports?.find((p) => p.name === port)?.containerPort
}

export function kubernetesPortProblems (objects: KubeObject[], dockerfile: string): string[] {
  const problems = imagePortProblems(dockerfile)
  for (const { object, labels, pod } of workloads(objects)) {
    for (const container of pod.containers) {
      const env = podEnv(objects, dockerfile, container)
      const listen = Number(env.PORT)
      // METRICS_PORT: /metrics on a listener of its own, declared beside the API port.
      const metrics =
        env.METRICS_PORT === undefined || env.METRICS_PORT === ''
          ? undefined
          : Number(env.METRICS_PORT)
      const declared = (container.ports ?? []).map(p => p.containerPort)
      const listening = metrics === undefined ? [listen] : [listen, metrics]
      if (declared.join() !== listening.join()) {
        problems.push(
          `${name(object)} ${container.name}: containerPort ${declared.join(', ')}, but the ` +
          `gateway listens on ${listening.join(', ')}`
        )
      }
      for (const [kind, probe] of [
        ['readinessProbe', container.readinessProbe],
        ['livenessProbe', container.livenessProbe],
        ['startupProbe', container.startupProbe]
      ] as const) {
        if (probe?.httpGet !== undefined && portNumber(container, probe.httpGet.port) !== listen) {
          problems.push(
            `${name(object)} ${container.name}: ${kind} on port ${probe.httpGet.port}, not ` +
            `${listen}`
          )
        }
      }
      for (const service of byKind(objects, 'Service').filter((s) =>
        selects((s.spec as { selector?: Record<string, string> }).selector, labels)
      )) {
        for (const port of (
          service.spec as { ports?: Array<{ port: number; targetPort?: number | string }> }
        ).ports ?? []) {
          if (portNumber(container, port.targetPort ?? port.port) !== listen) {
            problems.push(
              `${name(service)}: port ${port.port} targets ${port.targetPort ?? port.port}, not ` +
              `the gateway's ${listen}`
            )
          }
        }
      }
      for (const policy of byKind(objects, 'NetworkPolicy').filter((p) =>
        selects(
          ((p.spec as Json).podSelector as { matchLabels?: Record<string, string> }).matchLabels,
          labels
        )
      )) {
        for (const rule of ((policy.spec as Json).ingress ?? []) as Array<{
          ports?: Array<{ port?: number | string }>
        }>) {
          for (const port of rule.ports ?? [{}]) {
            const number = portNumber(container, port.port)
            if (number !== listen && (metrics === undefined || number !== metrics)) {
              problems.push(
                `${name(policy)}: ingress to port ${port.port ?? 'any'}, neither the API port ` +
                `${listen} nor METRICS_PORT`
              )
            }
          }
        }
      }
    }
  }
  return problems
}

export function kubernetesProbeProblems (
  objects: KubeObject[],
  hasRoute: (path: string) => boolean
): string[] {
  const problems: string[] = []
  for (const { object, pod } of workloads(objects)) {
    for (const container of pod.containers) {
      const wanted = {
        readinessProbe: '/health/ready',
        livenessProbe: '/health/live',
        startupProbe: '/health/live'
      } as const
      for (const [kind, path] of Object.entries(wanted) as Array<[keyof typeof wanted, string]>) {
        const probe = container[kind]
        if (probe === undefined) {
          if (kind !== 'startupProbe') {
            problems.push(`${name(object)} ${container.name}: no ` +
            `${kind}`)
          }
          continue
        }
        const asked = probe.httpGet?.path
        if (asked !== path) {
          problems.push(
            `${name(object)} ${container.name}: ${kind} asks ${asked ?? '(no HTTP GET)'}, not ` +
            `${path}`
          )
        }
        if (asked !== undefined && !hasRoute(asked)) {
          problems.push(`${name(object)} ` +
          `${container.name}: the gateway has no route GET ${asked}`)
        }
      }
    }
  }
  return problems
}

function preStopSeconds (container: Container): number {
  const preStop = container.lifecycle?.preStop
  if (preStop?.sleep !== undefined) return preStop.sleep.seconds
  const command = preStop?.exec?.command ?? []
  return command[0] === 'sleep' ? Number(command[1]) : 0
}

export function kubernetesShutdownProblems (objects: KubeObject[], dockerfile: string): string[] {
  const problems: string[] = []
  for (const { object, pod } of workloads(objects)) {
    for (const container of pod.containers) {
      const pause = preStopSeconds(container)
      if (pause === 0) {
        problems.push(
          `${name(object)} ${container.name}: no preStop pause: SIGTERM may come before the ` +
          'endpoints drop the pod'
        )
      }
      const grace = milliseconds(podEnv(objects, dockerfile, container), 'SHUTDOWN_GRACE_MS') / 1000
      const period = pod.terminationGracePeriodSeconds ?? 30
      if (period <= pause + grace) {
        problems.push(
          `${name(object)}: terminationGracePeriodSeconds ${period} is not above the preStop ` +
          `pause (${pause} s) plus SHUTDOWN_GRACE_MS (${grace} s)`
        )
      }
    }
  }
  return problems
}

function mountedSecretPaths (pod: PodSpec, container: Container): string[] {
  const secretVolumes = new Set(
    (pod.volumes ?? []).filter((v) => v.secret !== undefined).map((v) => v.name)
  )
  return (container.volumeMounts ?? []).filter(m => secretVolumes.has(m.name)).map(m => m.mountPath)
}

export function kubernetesSecretProblems (objects: KubeObject[]): string[] {
  const problems: string[] = []
  for (const secret of byKind(objects, 'Secret')) {
    problems.push(
      `${name(secret)}: a Secret's values in the manifests; create it from files beside them`
    )
  }
  for (const map of byKind(objects, 'ConfigMap')) {
    const data = (map.data ?? {}) as Env
    for (const setting of SECRET_SETTINGS) {
      if (setting !== 'REDIS_URL' && setting in data) {
        problems.push(`${name(map)}: ${setting} ` +
        'is a secret, not a ConfigMap value')
      }
    }
    for (const [key, value] of Object.entries(data)) {
      if (CREDENTIALS_IN_URL.test(value)) {
        problems.push(`${name(map)}: ${key} holds a URL with ` +
        'a password')
      }
    }
  }
  for (const { object, pod } of workloads(objects)) {
    for (const container of pod.containers) {
      const where = `${name(object)} ${container.name}`
      const env = new Map((container.env ?? []).map(entry => [entry.name, entry]))
      for (const setting of SECRET_SETTINGS) {
        const entry = env.get(setting)
        if (entry?.value !== undefined) problems.push(`${where}: ${setting} is written inline`)
        else if (entry?.valueFrom !== undefined) {
          problems.push(
            `${where}: ${setting} is a variable: mount its Secret and set ${setting}_FILE`
          )
        }
      }
      // Every *_FILE setting, of the container's env or its ConfigMaps: the hub's key and the
      // clients always.
      const declared = declaredEnv(objects, container)
      const mounted = mountedSecretPaths(pod, container)
      const set = Object.keys(declared).filter(key => isSecretFile(key) && declared[key] !== '')
      for (const setting of new Set(['UPSTREAM_API_KEY_FILE', 'CLIENTS_FILE', ...set])) {
        const path = declared[setting] ?? ''
        if (!mounted.some((dir) => path.startsWith(`${dir}/`))) {
          problems.push(`${where}: ` +
          `${setting}=${path} is not a file of a mounted Secret`)
        }
      }
      for (const mount of container.volumeMounts ?? []) {
        if (mount.subPath !== undefined && mounted.includes(mount.mountPath)) {
          problems.push(
            `${where}: the Secret at ${mount.mountPath} is mounted with subPath and would not ` +
            'follow a rotation'
          )
        }
      }
    }
  }
  return problems
}

function selects (
  selector: Record<string, string> | undefined,
  labels: Record<string, string>
): boolean {
  return (
    selector !== undefined &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([key, value]) => labels[key] === value)
  )
}

export function kubernetesHardeningProblems (objects: KubeObject[]): string[] {
  const problems: string[] = []
  const list = workloads(objects)
  if (list.length !== 1) problems.push(`${list.length} Deployments, not one`)
  for (const { object, labels, pod } of list) {
    const where = name(object)
    const replicas = (object.spec as { replicas?: number }).replicas ?? 1
    if (replicas < 2) problems.push(`${where}: ${replicas} replica(s), not two or more`)
    if (pod.securityContext?.runAsNonRoot !== true) {
      problems.push(`${where}: the pod may run ` +
      'as root (runAsNonRoot)')
    }
    if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault') {
      problems.push(`${where}: ` + 'no RuntimeDefault seccomp profile')
    }
    if (pod.automountServiceAccountToken !== false) {
      problems.push(`${where}: a service account ` +
      'token is mounted')
    }
    if (pod.enableServiceLinks !== false) {
      problems.push(
        `${where}: service links would put *_PORT variables (REDIS_PORT for a Service named ` +
        'redis) beside the settings'
      )
    }
    for (const container of pod.containers) {
      const context = container.securityContext ?? {}
      if (context.allowPrivilegeEscalation !== false) {
        problems.push(`${where} ` +
        `${container.name}: privilege escalation allowed`)
      }
      if (context.readOnlyRootFilesystem !== true) {
        problems.push(`${where} ${container.name}: ` +
        'the root filesystem is writable')
      }
      if (
        !(context.capabilities?.drop ?? []).includes('ALL') ||
        (context.capabilities?.add ?? []).length > 0
      ) { problems.push(`${where} ${container.name}: capabilities are not all dropped`) }
      if (context.privileged === true) problems.push(`${where} ${container.name}: privileged`)
      const { requests = {}, limits = {} } = container.resources ?? {}
      for (const resource of ['cpu', 'memory']) {
        if (requests[resource] === undefined) {
          problems.push(`${where} ${container.name}: no ` +
          `${resource} request`)
        }
      }
      if (limits.memory === undefined) problems.push(`${where} ${container.name}: no memory limit`)
    }
    const autoscalers = byKind(objects, 'HorizontalPodAutoscaler').filter(
      (h) =>
        (h.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef.name ===
        object.metadata.name
    )
    if (autoscalers.length !== 1) {
      problems.push(`${where}: ${autoscalers.length} ` +
      'HorizontalPodAutoscalers scale it, not one')
    }
    for (const hpa of autoscalers) {
      const {
        minReplicas = 1,
        maxReplicas,
        scaleTargetRef
      } = hpa.spec as {
        minReplicas?: number
        maxReplicas: number
        scaleTargetRef: { kind: string; apiVersion?: string }
      }
      if (scaleTargetRef.kind !== 'Deployment' || scaleTargetRef.apiVersion !== object.apiVersion) {
        problems.push(
          `${name(hpa)}: scales a ${scaleTargetRef.apiVersion ?? '?'} ${scaleTargetRef.kind}, ` +
          `not the ${object.apiVersion} Deployment`
        )
      }
      if (minReplicas < 2) {
        problems.push(`${name(hpa)}: minReplicas ${minReplicas}, not two or ` +
        'more')
      }
      if (maxReplicas < minReplicas) problems.push(`${name(hpa)}: maxReplicas below minReplicas`)
    }
    for (const kind of ['Service', 'PodDisruptionBudget', 'NetworkPolicy']) {
      const matching = byKind(objects, kind).filter(o => {
        const spec = o.spec as {
          selector?: Record<string, string> | { matchLabels?: Record<string, string> }
          podSelector?: { matchLabels?: Record<string, string> }
        }
        const selector =
          kind === 'Service'
            ? (spec.selector as Record<string, string>)
            : kind === 'NetworkPolicy'
              ? spec.podSelector?.matchLabels
              : (spec.selector as { matchLabels?: Record<string, string> }).matchLabels
        return selects(selector, labels)
      })
      if (matching.length === 0) problems.push(`${where}: no ${kind} selects its pods`)
    }
  }
  return problems
}

/** Ports of a URL, the scheme's default when none is written. */
function urlPort (url: string): number {
  const parsed = new URL(url)
  return parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80
}

interface PolicyPeer {
  ipBlock?: { cidr: string; except?: string[] }
  namespaceSelector?: Json
  podSelector?: Json
}
interface PolicyRule {
  to?: PolicyPeer[]
  from?: PolicyPeer[]
  ports?: Array<{ port?: number | string; protocol?: string }>
}

/**
 * In: the API port. Out: DNS, the hub's ports (from its URLs) and Redis's, nothing else; never a
 * cloud's metadata service.
 */
export function kubernetesNetworkProblems (objects: KubeObject[], dockerfile: string): string[] {
  const problems: string[] = []
  for (const { object, labels, pod } of workloads(objects)) {
    const policies = byKind(objects, 'NetworkPolicy').filter((p) =>
      selects(
        ((p.spec as Json).podSelector as { matchLabels?: Record<string, string> }).matchLabels,
        labels
      )
    )
    const container = pod.containers[0]
    if (container === undefined) continue
    const env = podEnv(objects, dockerfile, container)
    const hubPorts = new Set(
      [env.UPSTREAM_HUB_URL, env.UPSTREAM_BASE_URL].map((url) =>
        url === undefined || url === '' ? 443 : urlPort(url)
      )
    )
    const redisPorts = new Set([6379, 6380])
    for (const policy of policies) {
      const spec = policy.spec as {
        policyTypes?: string[]
        ingress?: PolicyRule[]
        egress?: PolicyRule[]
      }
      for (const type of ['Ingress', 'Egress']) {
        if (!(spec.policyTypes ?? []).includes(type)) {
          problems.push(`${name(policy)}: ${type} ` +
          'is not restricted (policyTypes)')
        }
      }
      const egress = spec.egress ?? []
      const allowed = new Set<number>()
      for (const rule of egress) {
        if (rule.ports === undefined || rule.ports.length === 0) {
          problems.push(`${name(policy)}: ` + 'an egress rule allows every port')
        }
        if (rule.to === undefined || rule.to.length === 0) {
          problems.push(`${name(policy)}: an ` +
          'egress rule allows every destination')
        }
        for (const port of rule.ports ?? []) {
          const number = portNumber(container, port.port)
          if (number === undefined) continue
          allowed.add(number)
          if (number !== 53 && !hubPorts.has(number) && !redisPorts.has(number)) {
            problems.push(
              `${name(policy)}: egress to port ${number}, neither DNS, the hub ` +
              `(${[...hubPorts].join(', ')}) nor Redis`
            )
          }
        }
        for (const peer of rule.to ?? []) {
          if (
            peer.ipBlock?.cidr === '0.0.0.0/0' &&
            !(peer.ipBlock.except ?? []).includes('169.254.0.0/16')
          ) {
            problems.push(
              `${name(policy)}: egress to every address includes a cloud's metadata service ` +
              '(169.254.0.0/16)'
            )
          }
        }
      }
      if (!allowed.has(53)) problems.push(`${name(policy)}: no egress to DNS`)
      for (const port of hubPorts) {
        if (!allowed.has(port)) {
          problems.push(`${name(policy)}: no egress to the hub's port ` +
          `${port}`)
        }
      }
      if (![...redisPorts].some((port) => allowed.has(port))) {
        problems.push(`${name(policy)}: ` +
        'no egress to Redis')
      }
    }
    if (policies.length === 0) problems.push(`${name(object)}: no NetworkPolicy selects its pods`)
  }
  return problems
}
