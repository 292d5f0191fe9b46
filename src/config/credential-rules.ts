import type { RawConfig } from './schema.ts'
import { redisUrlWithPassword } from './secret-files.ts'

/**
 * The rules between the credential settings that the schema cannot say:
 * how login mode is given its credentials, and REDIS_PASSWORD beside
 * REDIS_URL. One line per problem, naming the settings, never a value.
 */
export function credentialProblems (config: RawConfig, hubConfigured: boolean): string[] {
  const problems: string[] = []
  const body = config.UPSTREAM_LOGIN_BODY !== undefined
  const username = config.UPSTREAM_LOGIN_USERNAME !== undefined
  const password = config.UPSTREAM_LOGIN_PASSWORD !== undefined
  if (body && (username || password)) {
    problems.push(`UPSTREAM_LOGIN_BODY: set either it or UPSTREAM_LOGIN_USERNAME and UPSTREAM_LOGIN_PASSWORD, not both (${username ? 'UPSTREAM_LOGIN_USERNAME' : 'UPSTREAM_LOGIN_PASSWORD'} is set)`)
  } else if (username !== password) {
    problems.push(`${username ? 'UPSTREAM_LOGIN_PASSWORD' : 'UPSTREAM_LOGIN_USERNAME'}: is required with ${username ? 'UPSTREAM_LOGIN_USERNAME' : 'UPSTREAM_LOGIN_PASSWORD'}`)
  }
  if (hubConfigured && config.UPSTREAM_CREDENTIALS === 'login') {
    // With a profile, its login.path may give the address instead: checked once the profile is read (profile/resolve.ts).
    if (config.UPSTREAM_LOGIN_URL === undefined && config.UPSTREAM_PROFILE_FILE === undefined) problems.push('UPSTREAM_LOGIN_URL: is required when UPSTREAM_CREDENTIALS=login')
    if (!body && !username && !password) {
      problems.push('UPSTREAM_LOGIN_USERNAME: is required when UPSTREAM_CREDENTIALS=login, with UPSTREAM_LOGIN_PASSWORD (or their *_FILE, or UPSTREAM_LOGIN_BODY for a body of another shape)')
    }
  }
  if (config.UPSTREAM_LOGIN_BODY !== undefined) {
    try {
      JSON.parse(config.UPSTREAM_LOGIN_BODY)
    } catch {
      problems.push('UPSTREAM_LOGIN_BODY: must be valid JSON')
    }
  }
  return problems
}

/**
 * Puts REDIS_PASSWORD into REDIS_URL (config/secret-files.ts), so that
 * everything downstream reads one address. Returns the problems.
 */
export function applyRedisPassword (config: RawConfig): string[] {
  if (config.REDIS_PASSWORD === undefined) return []
  if (config.REDIS_URL === undefined) return ['REDIS_PASSWORD: is set without REDIS_URL (or REDIS_URL_FILE), which says where Redis is']
  const { url, problem } = redisUrlWithPassword(config.REDIS_URL, config.REDIS_PASSWORD)
  if (url !== undefined) config.REDIS_URL = url
  return problem === undefined ? [] : [problem]
}
