import { createHash } from 'node:crypto'
import { OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { HubOperation, ParamKind } from '../catalogue/types.ts'
import { ConfigError, type Config } from '../config/load.ts'
import { BUILT_IN } from './built-in.ts'
import { checkedProfile, hubNames, loadProfileFile } from './load.ts'
import type {
  DATE_ANSWERED, DATE_SENT, HubProfile, NotFoundAnswer, ProfileFailure, ProfileOperation
} from './schema.ts'

/**
 * The hub profile in force: the profile file (UPSTREAM_PROFILE_FILE), or the
 * built-in one (the documented hub; the sandbox's when the gateway fronts
 * it), each member it leaves out taken from the documented hub
 * (built-in.ts) or the operation's catalogue entry. The profile alone
 * describes the hub; the settings say where it is and hold the secrets.
 * Resolved once at start-up, into one entry per operation.
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
  /**
   * After the prefix and a `/`, with `{hub name}` placeholders: `noblbc20/`,
   * `kontainerbc23/{noBl}/{tglBl}`.
   */
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
  timeouts: Timeouts
  /** Its own cache lifetime; undefined: CACHE_TTL_SECONDS. */
  cacheTtlSeconds: number | undefined
}

export interface Timeouts {
  /** Until the answer's headers. */
  headersMs: number
  /** Between two chunks of the body. */
  bodyMs: number
}

/** The login as the profile in force has it, every member given. */
export interface ProfileLogin {
  service: HubOperation['service']
  path?: string
  refreshPath?: string
  /** The body's template: "{username}" and "{password}" stand for the account (login-body.ts). */
  body: Record<string, unknown>
  tokenField: string
  expiresField: string
  refreshTokenField: string
  renewBeforeSeconds: number
  minIntervalSeconds: number
}

/** Where the gateway logs in and renews (login mode): the profile's paths under their address. */
export interface LoginAddresses {
  /** Undefined without a login path, or without a hub. */
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
  /** The UTC offset of the hub's local times. */
  timeZone: string
  connections: { max: number, connectTimeoutMs: number }
  /** The timeouts of `defaults`: the pools' and the login's. */
  timeouts: Timeouts
  retries: { count: number, baseMs: number, maxMs: number }
  breaker: { errorPercentage: number, volumeThreshold: number, windowMs: number, resetMs: number }
  login: ProfileLogin
  /** Addresses, not part of `document`: the base URLs are settings. */
  loginAddresses: LoginAddresses
  operations: ReadonlyMap<OperationId, OperationProfile>
  /** The profile in force written out in full, as a file would hold it (`npm run profile`). */
  document: HubProfile
  /**
   * A short hash of what `document` makes the gateway do (its name and description aside): the same
   * behaviour, the same digest, on every replica.
   */
  digest: string
}

const DOCUMENTED = BUILT_IN.settings

function isList (op: HubOperation): boolean {
  return op.response.type !== 'record'
}

/** `apiKeyHeader` as a list. */
function names (value: string | readonly string[]): readonly string[] {
  return typeof value === 'string' ? [value] : value
}

/** One operation: its profile entry over `defaults` over the documented hub and its catalogue. */
/** One operation as a profile has it: its entry over `defaults` over the documented reading. */
export function resolveOperation (op: HubOperation, profile: HubProfile): OperationProfile {
  const entry = profile.operations?.[op.id]
  const defaults = profile.defaults ?? {}
  const hub = hubNames(op, entry)
  const params: ProfileParam[] = [...hub].map(([name, upstream]) => ({
    name: name as ParamKind,
    upstream,
    kind: name as ParamKind
  }))
  const credentials = entry?.credentials ?? defaults.credentials ??
    op.headers.map(h => h === 'authorization' ? 'token' : 'apiKey')
  const documentedKey = op.response.type === 'keyed-list' ? op.response.key : undefined
  const prefixes = { ...BUILT_IN.prefixes, ...profile.prefixes }
  return {
    service: entry?.service ?? op.service,
    prefix: entry?.prefix ?? prefixes[op.area],
    path: entry?.path ?? op.path,
    params,
    credentials: { apiKey: credentials.includes('apiKey'), token: credentials.includes('token') },
    apiKeyHeaders: names(entry?.apiKeyHeader ?? defaults.apiKeyHeader ?? DOCUMENTED.apiKeyHeader),
    tokenHeader: entry?.tokenHeader ?? defaults.tokenHeader ?? DOCUMENTED.tokenHeader,
    answerKey: entry?.answerKey ?? (isList(op) ? defaults.answerKey : undefined) ?? documentedKey,
    dateSent: entry?.dateSent ?? defaults.dateSent ?? DOCUMENTED.dateSent,
    dateAnswered: entry?.dateAnswered ?? defaults.dateAnswered ?? DOCUMENTED.dateAnswered,
    errorFields: entry?.errorFields ?? defaults.errorFields ?? DOCUMENTED.errorFields,
    nullStrings: entry?.nullStrings ?? defaults.nullStrings ?? DOCUMENTED.nullStrings,
    failure: entry?.failure ?? defaults.failure,
    notFound: isList(op) ? entry?.notFound ?? defaults.notFound ?? 'empty' : undefined,
    timeouts: { ...DOCUMENTED.timeouts, ...defaults.timeouts, ...entry?.timeouts },
    cacheTtlSeconds: op.method === 'GET' ? entry?.cacheTtlSeconds : undefined
  }
}

/**
 * An operation's resolved settings as a profile's entry (the probe writes its proposed profile with
 * it).
 */
export function entryOf (op: OperationProfile): ProfileOperation {
  return {
    service: op.service,
    prefix: op.prefix,
    path: op.path,
    params: Object.fromEntries(op.params.map((p) => [p.name, p.upstream])),
    credentials: [
      ...(op.credentials.apiKey ? ['apiKey' as const] : []),
      ...(op.credentials.token ? ['token' as const] : [])
    ],
    apiKeyHeader: op.apiKeyHeaders.length === 1 ? op.apiKeyHeaders[0]! : [...op.apiKeyHeaders],
    tokenHeader: op.tokenHeader,
    ...(op.answerKey === undefined ? {} : { answerKey: op.answerKey }),
    dateSent: op.dateSent,
    dateAnswered: op.dateAnswered,
    errorFields: [...op.errorFields],
    nullStrings: [...op.nullStrings],
    ...(op.failure === undefined ? {} : { failure: op.failure }),
    ...(op.notFound === undefined ? {} : { notFound: op.notFound }),
    timeouts: { ...op.timeouts },
    ...(op.cacheTtlSeconds === undefined ? {} : { cacheTtlSeconds: op.cacheTtlSeconds })
  }
}

/** What resolveProfile reads of the settings: where the hub is, the profile file, the mode. */
export type ProfileConfig = Pick<Config,
  'UPSTREAM_PROFILE_FILE' | 'UPSTREAM_CREDENTIALS' | 'UPSTREAM_HUB_URL' | 'UPSTREAM_BASE_URL'>

export interface ProfileOptions {
  /**
   * The profile in force when UPSTREAM_PROFILE_FILE is unset (default: the
   * documented hub, `{ name: 'documented' }`): the built-in sandbox's, which
   * adds the login it models.
   */
  builtIn?: HubProfile
}

/**
 * The profile in force, from the file UPSTREAM_PROFILE_FILE names (read
 * here) or the built-in one; throws ConfigError with one line per problem.
 */
export function resolveProfile (
  config: ProfileConfig,
  options: ProfileOptions = {}
): ProfileInForce {
  const file = config.UPSTREAM_PROFILE_FILE
  const { builtIn } = options
  const given = builtIn === undefined ? undefined : checkedProfile(builtIn, 'the built-in profile')
  const profile = file !== undefined ? loadProfileFile(file) : given ?? { name: BUILT_IN.name }
  const login = loginOf(profile)
  const loginAddresses = addressesOf(config, login)
  const hubKnown = config.UPSTREAM_BASE_URL !== undefined
  if (config.UPSTREAM_CREDENTIALS === 'login' && hubKnown && loginAddresses.url === undefined) {
    const source = file ?? 'the built-in profile'
    throw new ConfigError(['UPSTREAM_CREDENTIALS: login needs the address of the hub\'s login, ' +
      `the profile's login.path (${source} gives none: the hub's document does not publish ` +
      'its login)'])
  }
  const operations = new Map((OPERATIONS as readonly HubOperation[])
    .map(op => [op.id as OperationId, resolveOperation(op, profile)]))
  const tokenScheme = profile.tokenScheme ?? BUILT_IN.tokenScheme
  const called = {
    timeZone: profile.timeZone ?? BUILT_IN.timeZone,
    connections: { ...BUILT_IN.connections, ...profile.connections },
    retries: { ...BUILT_IN.retries, ...profile.retries },
    breaker: { ...BUILT_IN.breaker, ...profile.breaker }
  }
  const timeouts = { ...DOCUMENTED.timeouts, ...profile.defaults?.timeouts }
  const document: HubProfile = {
    name: profile.name,
    ...(profile.description === undefined ? {} : { description: profile.description }),
    tokenScheme,
    stringValues: profile.stringValues ?? false,
    ...called,
    login,
    defaults: { timeouts },
    operations: Object.fromEntries([...operations].map(([id, op]) => [id, entryOf(op)]))
  }
  const { name: _name, description: _description, ...behaviour } = document
  const digest = createHash('sha256').update(JSON.stringify(behaviour)).digest('hex').slice(0, 16)
  return {
    name: profile.name,
    source: file ?? 'built-in',
    tokenScheme,
    stringValues: document.stringValues ?? false,
    ...called,
    timeouts,
    login,
    loginAddresses,
    operations,
    document,
    digest
  }
}

/** The login's members, each given: the profile's over the documented hub's. */
function loginOf (profile: HubProfile): ProfileLogin {
  const given = profile.login ?? {}
  return { ...BUILT_IN.login, body: { ...BUILT_IN.login.body }, ...given }
}

/** A path of the login under its address (its own path kept, as the operations' keep it). */
function under (address: string | undefined, path: string | undefined): string | undefined {
  if (address === undefined || path === undefined) return undefined
  return `${address.replace(/\/+$/, '')}${path}`
}

/** The login's addresses: its paths under UPSTREAM_BASE_URL (`service: hub`: UPSTREAM_HUB_URL). */
function addressesOf (config: ProfileConfig, login: ProfileLogin): LoginAddresses {
  const address = login.service === 'hub' ? config.UPSTREAM_HUB_URL : config.UPSTREAM_BASE_URL
  return { url: under(address, login.path), refreshUrl: under(address, login.refreshPath) }
}
