import { createHash } from 'node:crypto'
import { OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { Area, HubOperation, ParamKind } from '../catalogue/types.ts'
import { ConfigError, type Config } from '../config/load.ts'
import { ConfigSchema } from '../config/schema.ts'
import { hubNames, loadProfileFile } from './load.ts'
import { member } from './problems.ts'
import type {
  DATE_ANSWERED, DATE_SENT, HubProfile, NotFoundAnswer,
  ProfileFailure, ProfileOperation, ProfileSettings
} from './schema.ts'

/**
 * The hub profile in force: the profile file (UPSTREAM_PROFILE_FILE) over
 * the built-in one, which is the catalogue's reading of the hub with the
 * single-purpose settings applied (UPSTREAM_PATH_SEGMENT, UPSTREAM_ENV,
 * UPSTREAM_PARAM_PLACEMENT, UPSTREAM_API_KEY_HEADER, UPSTREAM_OPERATIONS,
 * UPSTREAM_LOGIN_TOKEN_SCHEME, UPSTREAM_LOGIN_*_FIELD, and in login mode
 * UPSTREAM_LOGIN_URL and UPSTREAM_LOGIN_REFRESH_URL): those stay shorthand for what a profile says. A
 * profile and a setting that both say the same thing are refused, naming
 * both. Resolved once at start-up, into one entry per operation.
 */

export type DateSent = typeof DATE_SENT[number]
export type DateAnswered = typeof DATE_ANSWERED[number]

/** A parameter as the profile in force has it. */
export interface ProfileParam {
  /** The gateway's name (the route's parameter). */
  name: ParamKind
  /** The hub's name. */
  upstream: string
  kind: ParamKind
}

/** One operation as the profile in force addresses, authenticates and reads it. */
export interface OperationProfile {
  service: HubOperation['service']
  /** `/V1/HUB/INT/AUTH`, or empty. */
  prefix: string
  /** After the prefix and a `/`, with `{hub name}` placeholders: `noblbc20/`, `kontainerbc23/{noBl}/{tglBl}`. */
  path: string
  /** In query-string order. */
  params: readonly ProfileParam[]
  credentials: { apiKey: boolean, token: boolean }
  apiKeyHeaders: readonly string[]
  tokenHeader: string
  /** Where the data is: a member, `*` (the only array), or undefined (the answer itself). */
  answerKey: string | undefined
  dateSent: DateSent
  dateAnswered: DateAnswered
  errorFields: readonly string[]
  nullStrings: readonly string[]
  failure: ProfileFailure | undefined
  /** How the hub answers a list lookup that finds nothing; undefined for a record. */
  notFound: NotFoundAnswer | undefined
}

/** The login's members as the profile in force has them: where the answers keep the token, its lifetime and the refresh token; the addresses when the profile gives them. */
export type ProfileLogin = NonNullable<HubProfile['login']> & { tokenField: string, expiresField: string, refreshTokenField: string }

/** Where the gateway logs in and renews (login mode): the profile's paths under UPSTREAM_BASE_URL, or the settings' addresses. */
export interface LoginAddresses {
  /** Undefined only outside login mode, or without a hub. */
  url: string | undefined
  /** Undefined: every renewal is a new login. */
  refreshUrl: string | undefined
}

export interface ProfileInForce {
  name: string
  /** `built-in`, or the file it was read from. */
  source: string
  /** Put before a token the gateway got by logging in; empty: the token alone. */
  tokenScheme: string
  stringValues: boolean
  login: ProfileLogin
  /** Addresses, not part of `document`: UPSTREAM_BASE_URL is a setting. */
  loginAddresses: LoginAddresses
  operations: ReadonlyMap<OperationId, OperationProfile>
  /** The profile in force written out in full, as a profile file would hold it (the start-up log shows it). */
  document: HubProfile
  /** A short hash of what `document` makes the gateway do (its name and description aside): the same behaviour, the same digest, on every replica. */
  digest: string
}

/** The built-in prefix of an area: lookups under `/V1/<segment>/INT/AUTH`; SP2 and booking under `/V3/<segment>` (production) or `/<segment>-DEV`. */
export function areaPrefix (area: Area, segment: string, env: Config['UPSTREAM_ENV']): string {
  if (area === 'lookup') return `/V1/${segment}/INT/AUTH`
  return env === 'production' ? `/V3/${segment}` : `/${segment}-DEV`
}

const DOCUMENTED = {
  tokenHeader: 'Authorization',
  dateSent: 'YYYYMMDD',
  dateAnswered: 'YYYY-MM-DD HH:MM:SS.S',
  errorFields: ['message'],
  nullStrings: []
} as const

function defaultOf (name: keyof typeof ConfigSchema.properties): unknown {
  return (ConfigSchema.properties[name] as { default?: unknown }).default
}

/** Whether a setting says something: set, and to another value than its default. */
function given (config: Config, name: keyof Config & keyof typeof ConfigSchema.properties): boolean {
  const value = config[name]
  return value !== undefined && JSON.stringify(value) !== JSON.stringify(defaultOf(name))
}

function isList (op: HubOperation): boolean {
  return op.response.type !== 'record'
}

/** The problems of UPSTREAM_OPERATIONS itself: names no operation or parameter of the catalogue knows. */
function overrideProblems (config: Config): string[] {
  const problems: string[] = []
  const known = new Set<string>(OPERATIONS.map(op => op.id))
  for (const id of Object.keys(config.UPSTREAM_OPERATIONS)) {
    if (!known.has(id)) problems.push(`UPSTREAM_OPERATIONS: unknown operation "${id}" (known: ${[...known].join(', ')})`)
  }
  for (const op of OPERATIONS as readonly HubOperation[]) {
    const override = config.UPSTREAM_OPERATIONS[op.id] ?? {}
    for (const name of Object.keys(override.paramNames ?? {})) {
      if (!op.params.some(p => p.name === name)) problems.push(`UPSTREAM_OPERATIONS.${op.id}.paramNames: unknown parameter "${name}"`)
    }
    if (override.responseKey !== undefined && op.response.type !== 'keyed-list') {
      problems.push(`UPSTREAM_OPERATIONS.${op.id}.responseKey: this operation does not answer under a key`)
    }
  }
  return problems
}

/** Where a profile says something a setting also says: `[setting, place in the profile]`. */
function conflicts (config: Config, profile: HubProfile): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const entries = Object.entries(profile.operations ?? {}) as Array<[OperationId, ProfileOperation]>
  const at = (id: string, key: string) => `${member('$.operations', id)}.${key}`
  const first = (key: keyof ProfileOperation & keyof ProfileSettings, ids?: ReadonlySet<string>): string | undefined => {
    if (profile.defaults?.[key] !== undefined) return `$.defaults.${key}`
    const found = entries.find(([id, entry]) => entry[key] !== undefined && (ids === undefined || ids.has(id)))
    return found === undefined ? undefined : at(found[0], key)
  }
  const check = (setting: string, place: string | undefined) => { if (place !== undefined) out.push([setting, place]) }
  if (given(config, 'UPSTREAM_API_KEY_HEADER')) check('UPSTREAM_API_KEY_HEADER', first('apiKeyHeader'))
  // UPSTREAM_PATH_SEGMENT decides every area's prefix, UPSTREAM_ENV those of SP2 and booking.
  for (const [setting, areas] of [['UPSTREAM_PATH_SEGMENT', ['lookup', 'sp2', 'booking']], ['UPSTREAM_ENV', ['sp2', 'booking']]] as const) {
    if (!given(config, setting)) continue
    const area = areas.find(a => profile.prefixes?.[a] !== undefined)
    const op = entries.find(([id, entry]) => entry.prefix !== undefined && (areas as readonly string[]).includes(operationArea(id)))
    check(setting, area !== undefined ? `$.prefixes.${area}` : op === undefined ? undefined : at(op[0], 'prefix'))
  }
  if (given(config, 'UPSTREAM_PARAM_PLACEMENT')) {
    const op = entries.find(([, entry]) => entry.path !== undefined)
    check('UPSTREAM_PARAM_PLACEMENT', op === undefined ? undefined : at(op[0], 'path'))
  }
  if (given(config, 'UPSTREAM_LOGIN_TOKEN_SCHEME') && profile.tokenScheme !== undefined) out.push(['UPSTREAM_LOGIN_TOKEN_SCHEME', '$.tokenScheme'])
  const login = profile.login ?? {}
  for (const [setting, key] of [['UPSTREAM_LOGIN_TOKEN_FIELD', 'tokenField'], ['UPSTREAM_LOGIN_EXPIRES_FIELD', 'expiresField'], ['UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD', 'refreshTokenField']] as const) {
    if (given(config, setting) && login[key] !== undefined) out.push([setting, `$.login.${key}`])
  }
  // The addresses are read in login mode only (the built-in sandbox sets its own for every mode).
  if (config.UPSTREAM_CREDENTIALS === 'login') {
    if (config.UPSTREAM_LOGIN_URL !== undefined && login.path !== undefined) out.push(['UPSTREAM_LOGIN_URL', '$.login.path'])
    if (config.UPSTREAM_LOGIN_REFRESH_URL !== undefined && login.refreshPath !== undefined) out.push(['UPSTREAM_LOGIN_REFRESH_URL', '$.login.refreshPath'])
  }
  const lists = new Set<string>(OPERATIONS.filter(op => isList(op)).map(op => op.id))
  for (const [id, override] of Object.entries(config.UPSTREAM_OPERATIONS)) {
    const entry = profile.operations?.[id]
    const one = (key: 'answerKey' | 'credentials' | 'params' | 'dateSent', inDefaults: boolean) =>
      entry?.[key] !== undefined ? at(id, key) : inDefaults && key !== 'params' && profile.defaults?.[key] !== undefined ? `$.defaults.${key}` : undefined
    if (override.responseKey !== undefined) check(`UPSTREAM_OPERATIONS.${id}.responseKey`, one('answerKey', lists.has(id)))
    if (override.headers !== undefined) check(`UPSTREAM_OPERATIONS.${id}.headers`, one('credentials', true))
    if (override.paramNames !== undefined) check(`UPSTREAM_OPERATIONS.${id}.paramNames`, one('params', false))
    if (override.dateFormat !== undefined) check(`UPSTREAM_OPERATIONS.${id}.dateFormat`, one('dateSent', true))
  }
  return out
}

function operationArea (id: string): string {
  return (OPERATIONS as readonly HubOperation[]).find(op => op.id === id)?.area ?? ''
}

/** `apiKeyHeader` as a list. */
function names (value: string | readonly string[]): readonly string[] {
  return typeof value === 'string' ? [value] : value
}

/** One operation: its profile entry over `defaults` over the built-in reading with the settings applied. */
function resolveOperation (op: HubOperation, config: Config, profile: HubProfile | undefined): OperationProfile {
  const override = config.UPSTREAM_OPERATIONS[op.id] ?? {}
  const entry = profile?.operations?.[op.id]
  const defaults = profile?.defaults ?? {}
  const renamed = override.paramNames ?? {}
  const hub = entry?.params !== undefined ? hubNames(op, entry) : new Map(op.params.map(p => [p.name, renamed[p.name] ?? p.upstream]))
  const params: ProfileParam[] = [...hub].map(([name, upstream]) => ({ name: name as ParamKind, upstream, kind: name as ParamKind }))
  // Without a path of its own: the catalogue's, with the parameters as segments in their order when UPSTREAM_PARAM_PLACEMENT=path.
  const alwaysQuery = new Set(op.params.filter(p => p.alwaysQuery === true).map(p => p.name))
  const segments = config.UPSTREAM_PARAM_PLACEMENT === 'path' ? params.filter(p => !alwaysQuery.has(p.name)).map(p => `{${p.upstream}}`) : []
  const credentials = entry?.credentials ?? defaults.credentials ?? (override.headers ?? op.headers).map(h => h === 'authorization' ? 'token' : 'apiKey')
  const documentedKey = op.response.type === 'keyed-list' ? override.responseKey ?? op.response.key : undefined
  return {
    service: entry?.service ?? op.service,
    prefix: entry?.prefix ?? profile?.prefixes?.[op.area] ?? areaPrefix(op.area, config.UPSTREAM_PATH_SEGMENT, config.UPSTREAM_ENV),
    path: entry?.path ?? op.path + segments.join('/'),
    params,
    credentials: { apiKey: credentials.includes('apiKey'), token: credentials.includes('token') },
    apiKeyHeaders: names(entry?.apiKeyHeader ?? defaults.apiKeyHeader ?? config.UPSTREAM_API_KEY_HEADER),
    tokenHeader: entry?.tokenHeader ?? defaults.tokenHeader ?? DOCUMENTED.tokenHeader,
    answerKey: entry?.answerKey ?? (isList(op) ? defaults.answerKey : undefined) ?? documentedKey,
    dateSent: entry?.dateSent ?? defaults.dateSent ?? override.dateFormat ?? DOCUMENTED.dateSent,
    dateAnswered: entry?.dateAnswered ?? defaults.dateAnswered ?? DOCUMENTED.dateAnswered,
    errorFields: entry?.errorFields ?? defaults.errorFields ?? DOCUMENTED.errorFields,
    nullStrings: entry?.nullStrings ?? defaults.nullStrings ?? DOCUMENTED.nullStrings,
    failure: entry?.failure ?? defaults.failure,
    notFound: isList(op) ? entry?.notFound ?? defaults.notFound ?? 'empty' : undefined
  }
}

/** An operation's resolved settings as a profile's entry (the probe writes its proposed profile with it). */
export function entryOf (op: OperationProfile): ProfileOperation {
  return {
    service: op.service,
    prefix: op.prefix,
    path: op.path,
    params: Object.fromEntries(op.params.map(p => [p.name, p.upstream])),
    credentials: [...(op.credentials.apiKey ? ['apiKey' as const] : []), ...(op.credentials.token ? ['token' as const] : [])],
    apiKeyHeader: op.apiKeyHeaders.length === 1 ? op.apiKeyHeaders[0]! : [...op.apiKeyHeaders],
    tokenHeader: op.tokenHeader,
    ...(op.answerKey === undefined ? {} : { answerKey: op.answerKey }),
    dateSent: op.dateSent,
    dateAnswered: op.dateAnswered,
    errorFields: [...op.errorFields],
    nullStrings: [...op.nullStrings],
    ...(op.failure === undefined ? {} : { failure: op.failure }),
    ...(op.notFound === undefined ? {} : { notFound: op.notFound })
  }
}

/** The profile in force, from the settings and the file UPSTREAM_PROFILE_FILE names (read here); throws ConfigError with one line per problem. */
export function resolveProfile (config: Config): ProfileInForce {
  const file = config.UPSTREAM_PROFILE_FILE
  const problems = overrideProblems(config)
  const profile = file === undefined ? undefined : loadProfileFile(file)
  if (profile !== undefined) {
    for (const [setting, place] of conflicts(config, profile)) {
      problems.push(`${setting}: the profile (${file}) says the same at ${place}; keep one of them (unset the setting, or remove that member of the profile)`)
    }
  }
  const loginAddresses = addressesOf(config, profile?.login)
  if (config.UPSTREAM_CREDENTIALS === 'login' && config.UPSTREAM_BASE_URL !== undefined && loginAddresses.url === undefined) {
    problems.push(`UPSTREAM_LOGIN_URL: is required when UPSTREAM_CREDENTIALS=login, unless the profile gives login.path${file === undefined ? ' (no UPSTREAM_PROFILE_FILE is set)' : ` (${file} gives none)`}`)
  }
  if (problems.length > 0) throw new ConfigError(problems)
  const operations = new Map((OPERATIONS as readonly HubOperation[]).map(op => [op.id as OperationId, resolveOperation(op, config, profile)]))
  // `none`: the token alone (an empty setting reads as unset); a profile says it with an empty tokenScheme.
  const tokenScheme = profile?.tokenScheme ?? (config.UPSTREAM_LOGIN_TOKEN_SCHEME.toLowerCase() === 'none' ? '' : config.UPSTREAM_LOGIN_TOKEN_SCHEME)
  const login: ProfileLogin = {
    ...profile?.login,
    tokenField: profile?.login?.tokenField ?? config.UPSTREAM_LOGIN_TOKEN_FIELD,
    expiresField: profile?.login?.expiresField ?? config.UPSTREAM_LOGIN_EXPIRES_FIELD,
    refreshTokenField: profile?.login?.refreshTokenField ?? config.UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD
  }
  const name = profile?.name ?? 'documented'
  const document: HubProfile = {
    name,
    ...(profile?.description === undefined ? {} : { description: profile.description }),
    tokenScheme,
    stringValues: profile?.stringValues ?? false,
    login,
    operations: Object.fromEntries([...operations].map(([id, op]) => [id, entryOf(op)]))
  }
  const { name: _name, description: _description, ...behaviour } = document
  const digest = createHash('sha256').update(JSON.stringify(behaviour)).digest('hex').slice(0, 16)
  return { name, source: file ?? 'built-in', tokenScheme, stringValues: document.stringValues ?? false, login, loginAddresses, operations, document, digest }
}

/** A path of the profile's login under UPSTREAM_BASE_URL (its own path kept, as the operations' addresses keep it). */
function underBase (base: string | undefined, path: string | undefined): string | undefined {
  if (base === undefined || path === undefined) return undefined
  return `${base.replace(/\/+$/, '')}${path}`
}

/** The login's addresses: the profile's paths, else the settings' (a conflict between them has been refused). */
function addressesOf (config: Config, login: HubProfile['login']): LoginAddresses {
  return {
    url: underBase(config.UPSTREAM_BASE_URL, login?.path) ?? config.UPSTREAM_LOGIN_URL,
    refreshUrl: underBase(config.UPSTREAM_BASE_URL, login?.refreshPath) ?? config.UPSTREAM_LOGIN_REFRESH_URL
  }
}
