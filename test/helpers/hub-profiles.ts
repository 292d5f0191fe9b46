import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { OPERATIONS } from '../../src/catalogue/operations.ts'
import type { HubOperation } from '../../src/catalogue/types.ts'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY } from '../../src/sandbox/index.ts'

// The tests' own reading of a hub profile: the request a hub in that profile
// takes for an operation, built from the profile's JSON and the catalogue's
// documented defaults (a third reading beside the gateway's and the
// sandbox's), and where its answer keeps the data.

const ROOT = new URL('../../', import.meta.url)

/** The profiles the tests play: the two shipped and one neither fits. */
export const PROFILE_FILES = {
  documented: fileURLToPath(new URL('deploy/profiles/documented.json', ROOT)),
  'public-callers': fileURLToPath(new URL('deploy/profiles/public-callers.json', ROOT)),
  'other-hub': fileURLToPath(new URL('test/fixtures/profiles/other-hub.json', ROOT))
} as const

export type ProfileName = keyof typeof PROFILE_FILES

interface Settings {
  apiKeyHeader?: string | string[]
  tokenHeader?: string
  credentials?: string[]
  answerKey?: string
  dateSent?: string
  dateAnswered?: string
  errorFields?: string[]
  nullStrings?: string[]
  failure?: { statusField?: string, successValues?: string[], statusCodeField?: string }
  notFound?: string
}

export interface ProfileJson {
  name: string
  prefixes?: Record<string, string>
  tokenScheme?: string
  stringValues?: boolean
  login?: Record<string, string>
  defaults?: Settings
  operations?: Record<
    string,
    Settings & { prefix?: string; path?: string; params?: Record<string, string> }
  >
}

export function profileJson (name: ProfileName): ProfileJson {
  return JSON.parse(readFileSync(PROFILE_FILES[name], 'utf8')) as ProfileJson
}

const DOCUMENTED_PREFIX: Record<string, string> = {
  lookup: '/V1/HUB/INT/AUTH',
  sp2: '/HUB-DEV',
  booking: '/HUB-DEV'
}

export function catalogueOp (id: string): HubOperation {
  const op = (OPERATIONS as readonly HubOperation[]).find(o => o.id === id)
  if (op === undefined) throw new Error(`no operation ${id}`)
  return op
}

const isList = (op: HubOperation) => op.response.type !== 'record'

/**
 * One setting of an operation under the profile: its own, else the defaults' (`answerKey` there
 * only for lists).
 */
export function setting<K extends keyof Settings> (
  profile: ProfileJson,
  id: string,
  key: K
): Settings[K] {
  const own = profile.operations?.[id]?.[key]
  if (own !== undefined) return own
  if (key === 'answerKey' && !isList(catalogueOp(id))) return undefined
  return profile.defaults?.[key]
}

/** The parameters an operation takes under the profile: gateway name → hub name, in order. */
export function paramsOf (profile: ProfileJson, id: string): Array<[string, string]> {
  const own = profile.operations?.[id]?.params
  return own !== undefined
    ? Object.entries(own)
    : catalogueOp(id).params.map((p) => [p.name, p.upstream])
}

export interface HubRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: unknown
}

/**
 * The request for `id` with `values` by the gateway's names (dates as
 * YYYY-MM-DD), credentials under the profile's header names: the API key
 * under `keyHeader` (default: the first name listed), the static token.
 */
export function hubRequest (
  profile: ProfileJson,
  id: string,
  values: Record<string, string>,
  options: { keyHeader?: string; body?: unknown } = {}
): HubRequest {
  const op = catalogueOp(id)
  const entry = profile.operations?.[id] ?? {}
  const prefix = entry.prefix ?? profile.prefixes?.[op.area] ?? DOCUMENTED_PREFIX[op.area]
  let path = entry.path ?? op.path
  const query = new URLSearchParams()
  const dateSent = setting(profile, id, 'dateSent') ?? 'YYYYMMDD'
  for (const [name, hub] of paramsOf(profile, id)) {
    const raw = values[name]
    if (raw === undefined) throw new Error(`${id}: no value for ${name}`)
    const value = name === 'blDate' && dateSent === 'YYYYMMDD' ? raw.replaceAll('-', '') : raw
    if (path.includes(`{${hub}}`)) path = path.replace(`{${hub}}`, encodeURIComponent(value))
    else query.append(hub, value)
  }
  const credentials =
    setting(profile, id, 'credentials') ??
    op.headers.map((h) => (h === 'authorization' ? 'token' : 'apiKey'))
  const keyNames = setting(profile, id, 'apiKeyHeader') ?? 'customs-api-key'
  const headers: Record<string, string> = {}
  if (credentials.includes('apiKey')) {
    headers[options.keyHeader ?? (typeof keyNames === 'string' ? keyNames : (keyNames[0] ?? ''))] =
      SANDBOX_API_KEY
  }
  if (credentials.includes('token')) {
    headers[setting(profile, id, 'tokenHeader') ?? 'Authorization'] = SANDBOX_ACCESS_TOKEN
  }
  const search = query.toString()
  return {
    method: op.method,
    path: `${prefix}/${path}${search === '' ? '' : `?${search}`}`,
    headers,
    ...(options.body === undefined ? {} : { body: options.body })
  }
}

/**
 * The data of a 2xx answer: under the profile's key, the only array when `*`, else the catalogue's
 * key or the answer itself.
 */
export function dataOf (profile: ProfileJson, id: string, body: unknown): unknown {
  const op = catalogueOp(id)
  const key =
    setting(profile, id, 'answerKey') ??
    (op.response.type === 'keyed-list' ? op.response.key : undefined)
  if (key === undefined) return body
  if (typeof body !== 'object' || body === null) return undefined
  if (key === '*') return Array.isArray(body) ? body : Object.values(body).find(Array.isArray)
  return (body as Record<string, unknown>)[key]
}
