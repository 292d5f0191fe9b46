import type { Config } from '../config/load.ts'
import { loadProfileFile } from './load.ts'

/**
 * Every header name the profile file gives the hub's API key and token,
 * lower-cased, for the logger's redaction, which is set up before the
 * profile is resolved (and must hold even when it then turns out invalid:
 * its problems are reported by the hub plugin).
 */
export function profileHeaderNames (config: Pick<Config, 'UPSTREAM_PROFILE_FILE'>): string[] {
  if (config.UPSTREAM_PROFILE_FILE === undefined) return []
  let profile
  try {
    profile = loadProfileFile(config.UPSTREAM_PROFILE_FILE)
  } catch {
    return []
  }
  const names = new Set<string>()
  for (const settings of [profile.defaults ?? {}, ...Object.values(profile.operations ?? {})]) {
    const key = settings.apiKeyHeader
    for (const name of key === undefined ? [] : typeof key === 'string' ? [key] : key) {
      names.add(name.toLowerCase())
    }
    if (settings.tokenHeader !== undefined) names.add(settings.tokenHeader.toLowerCase())
  }
  return [...names]
}
