import type { SandboxOptions } from '../../src/sandbox/index.ts'
import { build, type BuildOptions, type Built } from './helper.ts'
import { PROFILE_FILES, catalogueOp, paramsOf, profileJson, setting } from './hub-profiles.ts'
import type { ProfileJson, ProfileName } from './hub-profiles.ts'

// The hubs the gateway is tested against: the sandbox without a profile (the
// default), and the sandbox playing each profile with the gateway configured
// with the same file (UPSTREAM_PROFILE_FILE); and what a test needs to know
// of each to expect the right things (test/helpers/suites/).

/**
 * A hub the gateway is tested against: the sandbox and the gateway with the same profile, or
 * neither with one.
 */
export interface Hub {
  name: 'default' | ProfileName
  /** The profile file both read; undefined for the default. */
  file: string | undefined
  /** The profile as the tests read it (the documented one for the default, which it is). */
  profile: ProfileJson
}

export const HUBS: Record<'default' | ProfileName, Hub> = {
  default: { name: 'default', file: undefined, profile: profileJson('documented') },
  documented: {
    name: 'documented',
    file: PROFILE_FILES.documented,
    profile: profileJson('documented')
  },
  'public-callers': {
    name: 'public-callers',
    file: PROFILE_FILES['public-callers'],
    profile: profileJson('public-callers')
  },
  'other-hub': {
    name: 'other-hub',
    file: PROFILE_FILES['other-hub'],
    profile: profileJson('other-hub')
  }
}

/**
 * The gateway in front of the sandbox, both playing the hub (build() with the profile on both
 * sides).
 */
export function buildHub (
  t: Parameters<typeof build>[0],
  hub: Hub,
  options: BuildOptions = {}
): Promise<Built> {
  if (hub.file === undefined) return build(t, options)
  const file = hub.file
  const sandbox: SandboxOptions = { ...options.sandbox, profile: file }
  return build(t, {
    ...options,
    sandbox,
    env: (sb) => ({
      UPSTREAM_PROFILE_FILE: file,
      ...(typeof options.env === 'function' ? options.env(sb) : options.env)
    })
  })
}

/**
 * Whether the hub answers the stamped dates as the day alone (the gateway then answers no time for
 * them).
 */
export function dayOnly (hub: Hub): boolean {
  return (hub.profile.defaults?.dateAnswered ?? 'YYYY-MM-DD HH:MM:SS.S') !== 'YYYY-MM-DD HH:MM:SS.S'
}

/** A date (YYYY-MM-DD) as the hub takes it for the operation. */
export function sentDate (hub: Hub, id: string, date: string): string {
  return (setting(hub.profile, id, 'dateSent') ?? 'YYYYMMDD') === 'YYYYMMDD'
    ? date.replaceAll('-', '')
    : date
}

/**
 * The gateway route of an operation with `values` by the gateway's names:
 * its path parameter filled in, and in its query string the parameters the
 * hub takes for the operation (the route takes exactly those).
 */
export function routeUrl (hub: Hub, id: string, values: Record<string, string>): string {
  const op = catalogueOp(id)
  let url = op.route.url
  const inPath = new Set<string>()
  for (const [, name] of url.matchAll(/:([A-Za-z0-9]+)/g)) {
    if (name === undefined) continue
    inPath.add(name)
    url = url.replace(`:${name}`, encodeURIComponent(values[name] ?? ''))
  }
  if (op.method === 'POST') return url
  const query = new URLSearchParams()
  for (const [name] of paramsOf(hub.profile, id)) {
    if (!inPath.has(name)) query.append(name, values[name] ?? '')
  }
  const search = query.toString()
  return search === '' ? url : `${url}?${search}`
}

/**
 * The header names the hub reads the API key from for the operation (lower-case), none when it
 * needs no key.
 */
export function keyHeaders (hub: Hub, id: string): string[] {
  if (!credentialsOf(hub, id).includes('apiKey')) return []
  const names = setting(hub.profile, id, 'apiKeyHeader') ?? 'customs-api-key'
  return (typeof names === 'string' ? [names] : names).map(n => n.toLowerCase())
}

/**
 * The header the hub reads the token from for the operation (lower-case), undefined when it needs
 * none.
 */
export function tokenHeader (hub: Hub, id: string): string | undefined {
  if (!credentialsOf(hub, id).includes('token')) return undefined
  return (setting(hub.profile, id, 'tokenHeader') ?? 'Authorization').toLowerCase()
}

function credentialsOf (hub: Hub, id: string): string[] {
  return (
    setting(hub.profile, id, 'credentials') ??
    catalogueOp(id).headers.map((h) => (h === 'authorization' ? 'token' : 'apiKey'))
  )
}
