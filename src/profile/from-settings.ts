import { readFileSync } from 'node:fs'
import { OPERATIONS } from '../catalogue/operations.ts'
import type { Area, HubOperation } from '../catalogue/types.ts'
import { ConfigError } from '../config/load.ts'
import { REMOVED_SETTINGS } from '../config/removed-settings.ts'
import { BUILT_IN, LOGIN_PLACEHOLDERS } from './built-in.ts'
import { checkedProfile, hubNames } from './load.ts'
import type { HubProfile } from './schema.ts'

/**
 * The hub profile that the settings 1.0.0 removed meant (`npm run profile
 * -- --from-env`): the base profile (UPSTREAM_PROFILE_FILE's, or the
 * built-in documented one) with what each of them said written in as the
 * member that says it now. A setting at its old default said nothing and
 * writes nothing; every one set is listed to be unset. Written here rather
 * than with a JSON-patch library: each setting needs its own reading (a
 * URL to a path under a base URL, a login body to a template).
 */

/** What --from-env found. */
export interface FromSettings {
  /** The profile, as its file holds it; undefined when a problem stops it. */
  profile: HubProfile | undefined
  /** The removed settings the environment sets, to unset once the profile is in place. */
  unset: string[]
  /** What else to do, or to know, one line each. */
  notes: string[]
  /** Why no profile could be written, one line each, naming the setting. */
  problems: string[]
}

type Env = Readonly<Record<string, string | undefined>>
type Json = Record<string, unknown>
type Path = readonly string[]

function given (env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

/** The old prefix of an area: `/V1/<segment>/INT/AUTH`; `/V3/<segment>` or `/<segment>-DEV`. */
export function areaPrefix (area: Area, segment: string, env: string): string {
  if (area === 'lookup') return `/V1/${segment}/INT/AUTH`
  return env === 'production' ? `/V3/${segment}` : `/${segment}-DEV`
}

const { connections, retries, breaker, login, settings } = BUILT_IN

/** The numeric settings that became members: [setting, member path, old default]. */
const NUMBERS: ReadonlyArray<readonly [string, Path, number]> = [
  ['UPSTREAM_CONNECT_TIMEOUT_MS', ['connections', 'connectTimeoutMs'],
    connections.connectTimeoutMs],
  ['UPSTREAM_MAX_CONNECTIONS', ['connections', 'max'], connections.max],
  ['UPSTREAM_HEADERS_TIMEOUT_MS', ['defaults', 'timeouts', 'headersMs'],
    settings.timeouts.headersMs],
  ['UPSTREAM_BODY_TIMEOUT_MS', ['defaults', 'timeouts', 'bodyMs'], settings.timeouts.bodyMs],
  ['UPSTREAM_RETRIES', ['retries', 'count'], retries.count],
  ['UPSTREAM_RETRY_BASE_MS', ['retries', 'baseMs'], retries.baseMs],
  ['UPSTREAM_RETRY_MAX_MS', ['retries', 'maxMs'], retries.maxMs],
  ['BREAKER_ERROR_PERCENTAGE', ['breaker', 'errorPercentage'], breaker.errorPercentage],
  ['BREAKER_VOLUME_THRESHOLD', ['breaker', 'volumeThreshold'], breaker.volumeThreshold],
  ['BREAKER_WINDOW_MS', ['breaker', 'windowMs'], breaker.windowMs],
  ['BREAKER_RESET_MS', ['breaker', 'resetMs'], breaker.resetMs],
  ['UPSTREAM_LOGIN_RENEW_BEFORE_SECONDS', ['login', 'renewBeforeSeconds'],
    login.renewBeforeSeconds],
  ['UPSTREAM_LOGIN_MIN_INTERVAL_SECONDS', ['login', 'minIntervalSeconds'], login.minIntervalSeconds]
]

/** The text settings that became members: [setting, member path, old default]. */
const TEXTS: ReadonlyArray<readonly [string, Path, string]> = [
  ['UPSTREAM_API_KEY_HEADER', ['defaults', 'apiKeyHeader'], settings.apiKeyHeader],
  ['UPSTREAM_TIMEZONE', ['timeZone'], BUILT_IN.timeZone],
  ['UPSTREAM_LOGIN_TOKEN_FIELD', ['login', 'tokenField'], login.tokenField],
  ['UPSTREAM_LOGIN_EXPIRES_FIELD', ['login', 'expiresField'], login.expiresField],
  ['UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD', ['login', 'refreshTokenField'], login.refreshTokenField]
]

/** Removed settings that were secrets, given as files too. */
const REMOVED_FILES = ['UPSTREAM_LOGIN_BODY_FILE', 'REDIS_PASSWORD_FILE']

function isObject (value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function objectAt (root: Json, path: Path): Json {
  let at = root
  for (const key of path) {
    const next = at[key]
    if (!isObject(next)) at[key] = {}
    at = at[key] as Json
  }
  return at
}

function valueAt (root: Json, path: Path): unknown {
  let at: unknown = root
  for (const key of path) at = isObject(at) ? at[key] : undefined
  return at
}

function parsedObject (text: string, setting: string): { value?: Json, problem?: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { problem: `${setting}: is not JSON` }
  }
  return isObject(value) ? { value } : { problem: `${setting}: is not a JSON object` }
}

/** The members of an old login body that held the user name and the password, by their names. */
const ACCOUNT_MEMBERS = {
  username: /^(user(_?name)?|login|email|account)$/i,
  password: /^(pass(_?word)?|pwd)$/i
} as const

type Account = Record<'username' | 'password', string>

/** An old login body (it held the account) as a template, and which members held the account. */
function bodyTemplate (text: string): { template?: Json, members?: Account, problem?: string } {
  const { value: body, problem } = parsedObject(text, 'UPSTREAM_LOGIN_BODY')
  if (body === undefined) return { problem }
  const template: Json = { ...body }
  const members: Partial<Account> = {}
  for (const [key, value] of Object.entries(template)) {
    for (const what of ['username', 'password'] as const) {
      if (typeof value !== 'string' || members[what] !== undefined) continue
      if (!ACCOUNT_MEMBERS[what].test(key)) continue
      members[what] = key
      template[key] = LOGIN_PLACEHOLDERS[what]
    }
  }
  if (members.username === undefined || members.password === undefined) {
    return {
      problem: 'UPSTREAM_LOGIN_BODY: which of its members hold the user name and the password is ' +
        'not clear from their names; write login.body in the profile, "{username}" and ' +
        '"{password}" where they go, and set UPSTREAM_LOGIN_USERNAME and UPSTREAM_LOGIN_PASSWORD'
    }
  }
  return { template, members: { username: members.username, password: members.password } }
}

type Service = 'hub' | 'base'

/** A whole login address as a path under one of the hub's addresses. */
function underAddress (
  env: Env,
  setting: string,
  url: string
): { service?: Service, path?: string, problem?: string } {
  if (!URL.canParse(url)) return { problem: `${setting}: is not an absolute URL` }
  const parsed = new URL(url)
  if (parsed.search !== '' || parsed.hash !== '') {
    return { problem: `${setting}: has a query or a fragment, which login.path cannot hold` }
  }
  const addresses = [['base', 'UPSTREAM_BASE_URL'], ['hub', 'UPSTREAM_HUB_URL']] as const
  for (const [service, name] of addresses) {
    const address = given(env, name)?.replace(/\/+$/, '')
    if (address !== undefined && url.startsWith(`${address}/`)) {
      return { service, path: url.slice(address.length) }
    }
  }
  return {
    problem: `${setting}: is under neither UPSTREAM_BASE_URL nor UPSTREAM_HUB_URL; the ` +
      'profile\'s login path is a path under one of them (login.service)'
  }
}

/** The profile being written, and what was said of it. */
class Writing {
  readonly profile: Json
  readonly notes: string[] = []
  readonly problems: string[] = []
  /** The settings that wrote a member, in order. */
  readonly said: string[] = []

  constructor (base: HubProfile | undefined) {
    this.profile = structuredClone(base ?? { name: BUILT_IN.name })
  }

  /** Writes `value` at `path`, noting where the base said otherwise (the gateway refused that). */
  write (setting: string, path: Path, value: unknown): void {
    const before = valueAt(this.profile, path)
    if (before !== undefined && JSON.stringify(before) !== JSON.stringify(value)) {
      this.notes.push(`${setting} and the profile's ${path.join('.')} both said it (the gateway ` +
        'refused that); the setting\'s value is written')
    }
    objectAt(this.profile, path.slice(0, -1))[path.at(-1)!] = value
    if (!this.said.includes(setting)) this.said.push(setting)
  }
}

function writeScalars (w: Writing, env: Env): void {
  for (const [setting, path, fallback] of NUMBERS) {
    const raw = given(env, setting)
    if (raw === undefined) continue
    if (!/^[0-9]+$/.test(raw)) {
      w.problems.push(`${setting}: must be a whole number in decimal digits (such as 64)`)
    } else if (Number(raw) !== fallback) w.write(setting, path, Number(raw))
  }
  for (const [setting, path, fallback] of TEXTS) {
    const raw = given(env, setting)
    if (raw !== undefined && raw !== fallback) w.write(setting, path, raw)
  }
  const scheme = given(env, 'UPSTREAM_LOGIN_TOKEN_SCHEME')
  if (scheme !== undefined && scheme !== BUILT_IN.tokenScheme) {
    const written = scheme.toLowerCase() === 'none' ? '' : scheme
    w.write('UPSTREAM_LOGIN_TOKEN_SCHEME', ['tokenScheme'], written)
  }
}

/** UPSTREAM_PATH_SEGMENT named the hub in each prefix, UPSTREAM_ENV chose SP2's and booking's. */
function writePrefixes (w: Writing, env: Env): void {
  const segment = given(env, 'UPSTREAM_PATH_SEGMENT') ?? 'HUB'
  const stage = given(env, 'UPSTREAM_ENV') ?? 'development'
  if (segment !== 'HUB') {
    w.write('UPSTREAM_PATH_SEGMENT', ['prefixes', 'lookup'], areaPrefix('lookup', segment, stage))
  }
  if (segment === 'HUB' && stage === 'development') return
  const setting = stage === 'development' ? 'UPSTREAM_PATH_SEGMENT' : 'UPSTREAM_ENV'
  for (const area of ['sp2', 'booking'] as const) {
    w.write(setting, ['prefixes', area], areaPrefix(area, segment, stage))
  }
}

/** UPSTREAM_OPERATIONS: per operation, its old members as the profile's. */
function writeOperations (w: Writing, env: Env): void {
  const text = given(env, 'UPSTREAM_OPERATIONS')
  if (text === undefined) return
  const { value, problem } = parsedObject(text, 'UPSTREAM_OPERATIONS')
  if (problem !== undefined) w.problems.push(problem)
  const setting = 'UPSTREAM_OPERATIONS'
  for (const [id, override] of Object.entries(value ?? {})) {
    const op = (OPERATIONS as readonly HubOperation[]).find(o => o.id === id)
    if (op === undefined || !isObject(override)) {
      w.problems.push(`${setting}: unknown operation "${id}"`)
      continue
    }
    const at = (...member: string[]) => ['operations', id, ...member]
    if (typeof override.responseKey === 'string') {
      if (op.response.type === 'keyed-list') w.write(setting, at('answerKey'), override.responseKey)
      else w.problems.push(`${setting}.${id}.responseKey: this operation answers under no key`)
    }
    if (Array.isArray(override.headers)) {
      const credentials = override.headers.map(h => h === 'authorization' ? 'token' : 'apiKey')
      w.write(setting, at('credentials'), credentials)
    }
    if (isObject(override.paramNames)) {
      const renamed = override.paramNames
      for (const name of Object.keys(renamed).filter(n => !op.params.some(p => p.name === n))) {
        w.problems.push(`${setting}.${id}.paramNames: unknown parameter "${name}"`)
      }
      const params = op.params.map(p => [p.name, renamed[p.name] ?? p.upstream])
      w.write(setting, at('params'), Object.fromEntries(params))
    }
    const { dateFormat } = override
    if (typeof dateFormat === 'string') w.write(setting, at('dateSent'), dateFormat)
    const timeouts = [['headersTimeoutMs', 'headersMs'], ['bodyTimeoutMs', 'bodyMs']] as const
    for (const [old, member] of timeouts) {
      if (override[old] !== undefined) w.write(setting, at('timeouts', member), override[old])
    }
    const ttl = override.cacheTtlSeconds
    if (ttl !== undefined) w.write(setting, at('cacheTtlSeconds'), ttl)
  }
}

/** UPSTREAM_PARAM_PLACEMENT=path: an operation without a path sent its parameters as segments. */
function writePlacement (w: Writing, env: Env): void {
  if (given(env, 'UPSTREAM_PARAM_PLACEMENT') !== 'path') return
  for (const op of OPERATIONS as readonly HubOperation[]) {
    const entry = valueAt(w.profile, ['operations', op.id])
    if (isObject(entry) && entry.path !== undefined) continue
    const params = isObject(entry) && isObject(entry.params)
      ? { params: Object.fromEntries(Object.entries(entry.params).map(([k, v]) => [k, String(v)])) }
      : undefined
    const alwaysQuery = new Set(op.params.filter(p => p.alwaysQuery === true).map(p => p.name))
    const names = [...hubNames(op, params)]
      .filter(([name]) => !alwaysQuery.has(name)).map(([, upstream]) => `{${upstream}}`)
    if (names.length === 0) continue
    w.write('UPSTREAM_PARAM_PLACEMENT', ['operations', op.id, 'path'], op.path + names.join('/'))
  }
}

/** The login's whole addresses, now paths under one of the hub's. */
function writeLoginAddresses (w: Writing, env: Env): void {
  const placed = [
    ['UPSTREAM_LOGIN_URL', given(env, 'UPSTREAM_LOGIN_URL'), 'path'],
    ['UPSTREAM_LOGIN_REFRESH_URL', given(env, 'UPSTREAM_LOGIN_REFRESH_URL'), 'refreshPath']
  ] as const
  let service: Service | undefined
  for (const [setting, url, member] of placed) {
    if (url === undefined) continue
    const found = underAddress(env, setting, url)
    if (found.problem !== undefined) {
      w.problems.push(found.problem)
      continue
    }
    if (service !== undefined && found.service !== service) {
      w.problems.push(`${setting}: is under another of the hub's addresses than ` +
        'UPSTREAM_LOGIN_URL; the login and its renewal share login.service')
      continue
    }
    service = found.service
    w.write(setting, ['login', member], found.path)
  }
  if (service === 'hub') w.write('UPSTREAM_LOGIN_URL', ['login', 'service'], 'hub')
}

/** A login body of its own held the account: its shape stays, the account goes to the settings. */
function writeLoginBody (w: Writing, env: Env): void {
  const file = given(env, 'UPSTREAM_LOGIN_BODY_FILE')
  let text = given(env, 'UPSTREAM_LOGIN_BODY')
  if (text === undefined && file !== undefined) {
    try {
      text = readFileSync(file, 'utf8').replace(/[\r\n]+$/, '')
    } catch {
      w.problems.push(`UPSTREAM_LOGIN_BODY_FILE: cannot read ${file}`)
    }
  }
  if (text === undefined) return
  const { template, members, problem } = bodyTemplate(text)
  if (problem !== undefined || template === undefined || members === undefined) {
    w.problems.push(problem ?? 'UPSTREAM_LOGIN_BODY: cannot be read')
    return
  }
  if (JSON.stringify(template) !== JSON.stringify(login.body)) {
    w.write('UPSTREAM_LOGIN_BODY', ['login', 'body'], template)
  }
  w.notes.push(`set UPSTREAM_LOGIN_USERNAME to the login body's "${members.username}" and ` +
    `UPSTREAM_LOGIN_PASSWORD to its "${members.password}" (or their *_FILE); the body's shape ` +
    'is now the profile\'s login.body')
  const others = Object.keys(template).filter(k => k !== members.username && k !== members.password)
  if (others.length > 0) {
    w.notes.push(`login.body keeps the body's other members as they were (${others.join(', ')}): ` +
      'no secret belongs in the profile')
  }
}

/**
 * The profile the removed settings of `env` meant, over `base` (the file
 * UPSTREAM_PROFILE_FILE names, parsed and checked; undefined: the built-in
 * documented profile).
 */
export function profileFromSettings (env: Env, base: HubProfile | undefined): FromSettings {
  const w = new Writing(base)
  const unset = [...Object.keys(REMOVED_SETTINGS), ...REMOVED_FILES]
    .filter(name => given(env, name) !== undefined)
  writeScalars(w, env)
  writePrefixes(w, env)
  writeOperations(w, env)
  writePlacement(w, env)
  writeLoginAddresses(w, env)
  writeLoginBody(w, env)
  for (const name of ['REDIS_PASSWORD', 'CACHE_MAX_ENTRIES']) {
    const replacement = REMOVED_SETTINGS[name]
    const set = given(env, name) !== undefined || given(env, `${name}_FILE`) !== undefined
    if (set && replacement !== undefined && 'instead' in replacement) {
      w.notes.push(`${name}: ${replacement.instead}`)
    }
  }
  const { notes, problems } = w
  if (problems.length > 0) return { profile: undefined, unset, notes, problems }
  try {
    const profile = checkedProfile(named(w, base), 'the profile written from the settings:')
    return { profile, unset, notes, problems }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return { profile: undefined, unset, notes, problems: error.problems }
  }
}

/** The profile written, named for what it came from, its name and description first. */
function named (w: Writing, base: HubProfile | undefined): Json {
  if (w.said.length === 0) return w.profile
  // The base's description no longer says what the profile is: replaced.
  const { $schema, name, description: _description, ...members } = w.profile
  const from = base === undefined ? 'documented (built in)' : base.name
  return {
    ...($schema === undefined ? {} : { $schema }),
    name: `${String(name)}-from-settings`.slice(0, 64),
    description: `Written by npm run profile -- --from-env from the profile ${from} and the ` +
      `settings ${w.said.join(', ')}.`,
    ...members
  }
}
