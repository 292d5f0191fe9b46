import { ConfigSchema } from '../../src/config/schema.ts'
import { SECRET_SETTINGS } from '../../src/config/secret-files.ts'

/**
 * The configuration reference, written from ConfigSchema: docs/reference/configuration.md
 * and .env.example. Each setting's meaning is its schema `description`, its
 * default the schema's `default`, its form what the schema allows, and an
 * example, where the schema gives one (`examples`), shows in .env.example.
 * What is said here and not in the schema is how settings are grouped and what
 * holds across a group (the intros below).
 *
 * .env.example lists only the settings a deployment sets (DEPLOYMENT below)
 * and points to docs/reference/configuration.md for the rest.
 *
 * Regenerate after adding or changing a setting:
 *
 *   npm run config-docs
 *
 * test/config-docs.test.ts fails while either file differs from what this
 * module writes, and while a setting falls into no group but "Other settings".
 * A new setting lands in the first group whose `match` takes its name; a new
 * kind of setting may need a group (or a wider `match`) below.
 */

interface SettingSchema {
  type?: string
  enum?: readonly unknown[]
  default?: unknown
  description?: string
  examples?: readonly unknown[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  format?: string
}

/** A variable the gateway reads that ConfigSchema does not hold (the platform's own). */
interface Outside { name: string, example: string, meaning: string }

export interface Group {
  id: string
  title: string
  /** Prose that holds for the group as a whole; markdown (backticks and links are kept in .env.example as they are). */
  intro: string
  match: (name: string) => boolean
  outside?: readonly Outside[]
}

const startsWith = (...prefixes: string[]) => (name: string) => prefixes.some(prefix => name.startsWith(prefix))
const oneOf = (...names: string[]) => (name: string) => names.includes(name)

export const GROUPS: readonly Group[] = [
  {
    id: 'listening',
    title: 'Listening, logging, client connections',
    intro: 'Where the gateway listens, what it believes of the proxies in front, and how long it ' +
      'gives its callers. Behind a load balancer set `TRUST_PROXY` (so that per-address limits ' +
      'and logged addresses are the callers\') and keep the balancer\'s idle timeout below ' +
      '`SERVER_KEEP_ALIVE_TIMEOUT_MS`; [deployment.md](../deployment.md#hardening) says what ' +
      'each limit protects.',
    match: (name) => oneOf('PORT', 'HOST', 'TRUST_PROXY', 'LOG_LEVEL', 'METRICS_PORT')(name) || name.startsWith('SERVER_')
  },
  {
    id: 'hub',
    title: 'The hub: addresses and profile',
    intro: 'Which hub the gateway fronts. Everything about the hub\'s shape (its prefixes and ' +
      'paths, header names, answer keys, date forms, time zone, its login) and how the gateway ' +
      'calls it (connections, timeouts, retries, circuit breaker) is the hub profile\'s ' +
      '([hub.md](../hub.md#hub-profiles)), not a setting. Leave `UPSTREAM_HUB_URL` and ' +
      '`UPSTREAM_BASE_URL` both unset to run on the built-in sandbox; setting only one is an ' +
      'error. When they are set, `UPSTREAM_API_KEY`, a hub token (see the credentials below) ' +
      'and `PLATFORM_ID` are required, and so is `CLIENTS_FILE`. A plain `http://` address to ' +
      'another machine (not loopback) is allowed with a warning at start-up: the hub\'s key and ' +
      'token would cross the network unencrypted. With `NODE_ENV=production` a gateway without ' +
      'a hub refuses to start unless `SANDBOX=true`.',
    match: oneOf('SANDBOX', 'PLATFORM_ID', 'UPSTREAM_HUB_URL', 'UPSTREAM_BASE_URL',
      'UPSTREAM_PROFILE_FILE')
  },
  {
    id: 'hub-credentials',
    title: 'Hub credentials',
    intro: 'The hub\'s API key and token, and its account. `UPSTREAM_CREDENTIALS` says where ' +
      'the token comes from: `static` (a value, or a file re-read when it changes, for ' +
      'rotation), `login` (the gateway logs in where the hub profile\'s `login` says, with the ' +
      'account below; on the sandbox these default to its modelled login) or `forward` (each ' +
      'caller sends its own hub token in `x-upstream-authorization`). ' +
      '[deployment.md](../deployment.md#hub-credentials) describes the three modes and the ' +
      'login\'s renewal.',
    match: startsWith('UPSTREAM_API_KEY', 'UPSTREAM_ACCESS_TOKEN', 'UPSTREAM_CREDENTIALS',
      'UPSTREAM_LOGIN')
  },
  {
    id: 'hub-calls',
    title: 'Hub calls: deadline and limits',
    intro: 'How much of the gateway a hub call may take ' +
      '([operations.md](../operations.md#how-it-fails) has ' +
      'the failure matrix). The connections, timeouts, retries and circuit breaker are the hub ' +
      'profile\'s (`connections`, `defaults.timeouts`, `retries`, `breaker`).',
    match: (name) =>
      startsWith('UPSTREAM_', 'TRANSCODE_')(name) && name !== 'UPSTREAM_TRACE_PROPAGATION'
  },
  {
    id: 'cache',
    title: 'Lookup cache',
    intro: 'Successful lookups are cached and identical lookups in flight share one hub call; a ' +
      'caller\'s `cache-control: no-cache` asks the hub afresh. With `REDIS_URL`, a shared tier ' +
      'in Redis sits behind each replica\'s memory tier. An empty answer is charged about 850 ' +
      'bytes of `CACHE_MAX_BYTES` ([operations.md](../operations.md#how-it-fails)).',
    match: startsWith('CACHE_')
  },
  {
    id: 'callers',
    title: 'Callers: clients, limits, idempotency, CORS',
    intro: 'Who may call and how much ([deployment.md](../deployment.md#clients-and-keys)). ' +
      '`CLIENTS_FILE` is a JSON array of `{ "name", "keySha256", "scopes", "rateLimit"?, ' +
      '"events"? }`; `npm run client-key -- --name yard-app --scopes customs:read` prints a new ' +
      'key and its entry. Without `REDIS_URL`, rate-limit counters and idempotency keys live in ' +
      'each instance\'s memory.',
    match: (name) => oneOf('CLIENTS_FILE', 'CORS_ORIGINS')(name) || startsWith('RATE_LIMIT_', 'IDEMPOTENCY_')(name)
  },
  {
    id: 'events',
    title: 'Event sockets',
    intro: 'WebSockets on `GET /v1/events` ([api.md](../api.md#events)). Sockets past a bound ' +
      'are refused before the upgrade, in the error envelope.',
    match: startsWith('EVENTS_')
  },
  {
    id: 'load',
    title: 'Load shedding and shutdown',
    intro: 'Past these the gateway answers 503 OVERLOADED with `retry-after` rather than slow ' +
      'everyone down; on SIGTERM it stops accepting, lets requests in flight finish and exits ' +
      '([operations.md](../operations.md#shutdown-and-load)).',
    match: startsWith('PRESSURE_', 'SHUTDOWN_')
  },
  {
    id: 'redis',
    title: 'Shared state for several replicas (Redis)',
    intro:
      'Set `REDIS_URL` on every replica behind one balancer ' +
        '([deployment.md](../deployment.md#redis)); ' +
      'what each use does while Redis fails is in ' +
      '[operations.md](../operations.md#when-redis-fails). The URL may ' +
      'hold a password: pass it from your secret store as a file (`REDIS_URL_FILE`, ' +
      '[deployment.md](../deployment.md#secrets-as-files)). Redis 7 or later: the gateway\'s Lua ' +
      'is a function library, loaded once by an administrator where the gateway\'s user may not ' +
      'load it; under the least-privilege ACL (no `SELECT`), leave the `/db` off the URL ' +
      '([deployment.md](../deployment.md#redis)).',
    match: startsWith('REDIS_')
  },
  {
    id: 'tracing',
    title: 'Tracing (OpenTelemetry)',
    intro: 'Off unless the standard `OTEL_*` variables ask for it (an OTLP endpoint, or ' +
      '`OTEL_TRACES_EXPORTER` `otlp` or `console`; `none` or `OTEL_SDK_DISABLED=true`: off); ' +
      'then the OpenTelemetry SDK for Node reads them itself. Unset, no part of the SDK is ' +
      'loaded. Values the SDK would silently replace by a default stop start-up. Spans and what ' +
      'they carry: [operations.md](../operations.md#traces).',
    match: startsWith('UPSTREAM_TRACE_', 'OTEL_'),
    outside: [
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', example: 'http://otel-collector:4318', meaning: 'The OTLP receiver (an endpoint turns tracing on).' },
      { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', example: 'http/protobuf', meaning: '`http/protobuf` (the default) or `http/json` (`grpc` also works).' },
      { name: 'OTEL_SERVICE_NAME', example: 'customs-gateway', meaning: 'The service name of every span; default `customs-gateway`.' },
      { name: 'OTEL_RESOURCE_ATTRIBUTES', example: 'deployment.environment.name=production', meaning: 'Resource attributes added to every span.' },
      { name: 'OTEL_TRACES_SAMPLER', example: 'parentbased_traceidratio', meaning: 'Default `parentbased_always_on` (the caller\'s sampling decision is kept).' },
      { name: 'OTEL_TRACES_SAMPLER_ARG', example: '0.1', meaning: 'The share of traces kept by a ratio sampler, 0 to 1.' }
    ]
  }
]

const OTHER: Group = {
  id: 'other',
  title: 'Other settings',
  intro: 'Settings no group above takes (scripts/docs/configuration-reference.ts groups them).',
  match: () => true
}

const INTRO = [
  'Environment variables; a `.env` file in the working directory is read at start-up when present (variables already set win). Every setting is optional: a setting left unset (or empty) takes the default shown. `NODE_ENV` is the platform\'s own: with `production`, a gateway without a hub refuses to start unless `SANDBOX=true`, so that a container whose settings failed to mount never serves seeded data with authentication off.',
  'Secrets never reach a response, a log line or the OpenAPI document; pass them from a secret ' +
  'store, never in an image. Every secret setting `X` (marked below) may be given as a file, ' +
  '`X_FILE`, as the official Docker images do (read at start-up, its trailing line break ' +
  'dropped; both ways at once, or a file that cannot be read, stops start-up).',
  'Invalid configuration stops start-up with one `config error:` line per problem and exit code ' +
  '1. A setting that 1.0.0 removed (most described the hub, which the hub profile alone ' +
  'describes now) stops start-up with one line naming what replaces it; `npm run --silent ' +
  'profile -- --from-env > hub-profile.json` writes the profile such settings meant. A variable ' +
  'with one of the gateway\'s prefixes (`UPSTREAM_`, `CACHE_`, … the prefixes of the settings ' +
  'below) that names no setting, or a variable close to a setting\'s name, is logged as one ' +
  'warning each at start, with the setting it may have meant when one is within a few edits ' +
  '(`REDIS_UR`: did you mean `REDIS_URL`?); with `NODE_ENV=production`, one close to ' +
  '`REDIS_URL`, `REDIS_KEY_PREFIX`, `REDIS_SENTINELS`, `CLIENTS_FILE` or an `UPSTREAM_*` ' +
  'setting stops start-up instead ([operations.md](../operations.md#start-up)). A setting ' +
    'checked ' +
  'against a pattern says what it expects, with an example. Numbers of whole units (ports, ' +
  'milliseconds, bytes, counts) are written in decimal digits: `1.5`, `1e3` or `0x10` is ' +
  'refused, never rounded; yes/no settings are `true` or `false`.'
]

interface Setting { name: string, schema: SettingSchema, required: boolean }

function settings (): Setting[] {
  const required = new Set<string>(ConfigSchema.required ?? [])
  return Object.entries(ConfigSchema.properties).map(([name, schema]) => ({ name, schema: schema as SettingSchema, required: required.has(name) }))
}

export function groupOf (name: string): Group {
  return GROUPS.find(group => group.match(name)) ?? OTHER
}

/** Settings in groups, each group in GROUPS order and its settings in the schema's order. */
export function grouped (): Array<{ group: Group, settings: Setting[] }> {
  const all = settings()
  return [...GROUPS, OTHER]
    .map(group => ({ group, settings: all.filter(setting => groupOf(setting.name) === group) }))
    .filter(entry => entry.settings.length > 0 || (entry.group.outside?.length ?? 0) > 0)
}

/** The value an environment variable would carry for this default. */
function envValue (value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

function range (schema: SettingSchema, unit: string): string {
  const { minimum, maximum } = schema
  if (minimum !== undefined && maximum !== undefined) return `${minimum} to ${maximum}${unit}`
  if (minimum !== undefined) return `at least ${minimum}${unit}`
  if (maximum !== undefined) return `at most ${maximum}${unit}`
  return ''
}

/** What the schema allows, in words: the part of a setting's form its description may not say. */
export function form (name: string, schema: SettingSchema): string {
  if (schema.enum !== undefined) return `one of ${schema.enum.map(value => `\`${String(value)}\``).join(', ')}`
  if (schema.type === 'boolean') return '`true` or `false`'
  if (schema.type === 'integer') {
    const unit = name.endsWith('_MS') ? ' (ms)' : name.endsWith('_SECONDS') ? ' (s)' : name.endsWith('_BYTES') ? ' (bytes)' : ''
    const bounds = range(schema, '')
    return bounds === '' ? `a whole number${unit}` : `a whole number, ${bounds}${unit}`
  }
  if (schema.type === 'object') return 'JSON'
  if (schema.format === 'uri') return 'an http(s) URL'
  if (schema.maxLength !== undefined) return `text, ${schema.minLength ?? 0} to ${schema.maxLength} characters`
  return ''
}

const SECRETS: ReadonlySet<string> = new Set(SECRET_SETTINGS)

/** A setting's meaning, its form where the schema says more than "text", a secret's file. */
function meaning (setting: Setting): string {
  const allowed = form(setting.name, setting.schema)
  const secret = SECRETS.has(setting.name)
    ? ` Secret: may be given as a file, \`${setting.name}_FILE\`.`
    : ''
  return sentence(setting.schema.description ?? '') + (allowed === '' ? '' : ` Form: ${allowed}.`) +
    secret
}

/**
 * The settings a deployment sets, which .env.example lists: where the hub
 * is and its profile, the secrets, who may call, Redis, where to listen
 * and what to log. The others keep their defaults unless a reason says
 * otherwise, and docs/reference/configuration.md has them.
 */
export const DEPLOYMENT: readonly string[] = [
  'PORT', 'HOST', 'TRUST_PROXY', 'LOG_LEVEL',
  'UPSTREAM_HUB_URL', 'UPSTREAM_BASE_URL', 'UPSTREAM_PROFILE_FILE', 'PLATFORM_ID',
  'UPSTREAM_API_KEY', 'UPSTREAM_CREDENTIALS', 'UPSTREAM_ACCESS_TOKEN',
  'UPSTREAM_LOGIN_USERNAME', 'UPSTREAM_LOGIN_PASSWORD',
  'CLIENTS_FILE', 'CORS_ORIGINS',
  'REDIS_URL', 'REDIS_KEY_PREFIX'
]

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

function defaultCell (setting: Setting): string {
  return setting.schema.default === undefined ? 'unset' : `\`${envValue(setting.schema.default)}\``
}

function sentence (text: string): string {
  const trimmed = text.trim()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}

export function renderConfigurationDoc (): string {
  const groups = grouped()
  const lines: string[] = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run config-docs` from src/config/schema.ts ' +
      '(scripts/docs/configuration-reference.ts groups the settings). Do not edit: change the ' +
      'schema and regenerate. -->',
    ''
  ]
  for (const paragraph of INTRO) lines.push(paragraph, '')
  lines.push('[`.env.example`](../../.env.example), written from the same schema, lists the ' +
    'settings a deployment sets.', '')
  lines.push('Groups: ' + groups.map(({ group }) => `[${group.title}](#${group.id})`).join(' · '), '')
  for (const { group, settings } of groups) {
    lines.push(`<a id="${group.id}"></a>`, '', `## ${group.title}`, '', group.intro, '')
    if (settings.length > 0) {
      lines.push('| setting | default | meaning |', '| --- | --- | --- |')
      for (const setting of settings) {
        lines.push(`| \`${setting.name}\` | ${cell(defaultCell(setting))} | ${cell(meaning(setting))} |`)
      }
      lines.push('')
    }
    if (group.outside !== undefined) {
      lines.push('Read by the OpenTelemetry SDK, not by the gateway\'s schema (the SDK knows more; these are the usual ones):', '')
      lines.push('| variable | example | meaning |', '| --- | --- | --- |')
      for (const outside of group.outside) lines.push(`| \`${outside.name}\` | \`${outside.example}\` | ${cell(outside.meaning)} |`)
      lines.push('')
    }
  }
  return lines.join('\n')
}

/** Markdown links become their text and their target, for a plain-text comment. */
function plain (markdown: string): string {
  return markdown.replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_, text: string, target: string) => {
    // Targets are relative to docs/reference/; the comment names paths from the root.
    const path = target.startsWith('../../')
      ? target.slice(6)
      : target.startsWith('../') ? `docs/${target.slice(3)}` : `docs/reference/${target}`
    return text === target.replace(/#.*/, '') ? path : `${text} (${path})`
  })
}

const ASSIGNMENT = /^[A-Z][A-Z0-9_]*=/

function comment (text: string, width = 78): string[] {
  const out: string[] = []
  let line = '#'
  for (const word of plain(text).split(/\s+/).filter(word => word !== '')) {
    if (line.length + 1 + word.length > width && line !== '#') {
      // A comment line that starts with NAME= would read as a commented setting.
      const carried = ASSIGNMENT.test(word) ? line.slice(line.lastIndexOf(' ') + 1) : ''
      out.push(carried === '' ? line : line.slice(0, line.lastIndexOf(' ')))
      line = carried === '' ? '#' : `# ${carried}`
    }
    line += ` ${word}`
  }
  if (line !== '#') out.push(line)
  return out
}

export function renderEnvExample (): string {
  const lines: string[] = [
    '# Customs data gateway configuration, written by `npm run config-docs` from',
    '# src/config/schema.ts; do not edit: change the schema and regenerate. Copy to',
    '# .env to use it (variables already set win).',
    '#',
    '# The settings a deployment sets. docs/reference/configuration.md describes',
    '# every setting, its default and the rules between them; docs/deployment.md',
    '# how to deploy; docs/hub.md the hub profile, which describes the hub. Each',
    '# secret X may be given as a file, X_FILE. A line NAME=value shows the',
    '# default; a commented line # NAME= a setting without one (unset), with an',
    '# example where the schema gives one.'
  ]
  for (const { group, settings: all } of grouped()) {
    const settings = all.filter(setting => DEPLOYMENT.includes(setting.name))
    if (settings.length === 0) continue
    lines.push('', `# --- ${group.title} ${'-'.repeat(Math.max(3, 72 - group.title.length))}`)
    for (const setting of settings) {
      lines.push(...comment(meaning(setting)))
      if (setting.schema.default !== undefined) {
        lines.push(`${setting.name}=${envValue(setting.schema.default)}`)
      } else {
        const example = setting.schema.examples?.[0]
        lines.push(`# ${setting.name}=${example === undefined ? '' : envValue(example)}`)
      }
    }
  }
  return lines.join('\n') + '\n'
}

export const CONFIG_DOCS: Readonly<Record<string, () => string>> = {
  'docs/reference/configuration.md': renderConfigurationDoc,
  '.env.example': renderEnvExample
}
