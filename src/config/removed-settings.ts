/**
 * Settings that 1.0.0 removed, and what says each now. Most described the
 * hub, which the hub profile alone describes (docs/hub.md#hub-profiles); a setting
 * still set stops start-up with one line naming what replaces it, so that
 * a deployment never runs without what it meant. `npm run profile --
 * --from-env` writes the profile such settings meant (profile/from-settings.ts).
 */

/** The command that writes the profile old settings meant, as the refusals name it. */
export const FROM_ENV_COMMAND = 'npm run --silent profile -- --from-env > hub-profile.json'

/** Each removed setting with the profile member that says it now, or what to do instead. */
type Replacement = { member: string } | { instead: string }

export const REMOVED_SETTINGS: Readonly<Record<string, Replacement>> = {
  UPSTREAM_OPERATIONS: {
    member: 'operations.<id>: answerKey (was responseKey), credentials (headers), params ' +
      '(paramNames), dateSent (dateFormat), timeouts.headersMs and timeouts.bodyMs, cacheTtlSeconds'
  },
  UPSTREAM_PARAM_PLACEMENT: {
    member: 'operations.<id>.path, a {placeholder} per parameter in the path'
  },
  UPSTREAM_PATH_SEGMENT: { member: 'prefixes (lookup, sp2, booking)' },
  UPSTREAM_ENV: { member: 'prefixes.sp2 and prefixes.booking' },
  UPSTREAM_API_KEY_HEADER: { member: 'defaults.apiKeyHeader' },
  UPSTREAM_TIMEZONE: { member: 'timeZone' },
  UPSTREAM_LOGIN_URL: {
    member: 'login.path (under UPSTREAM_BASE_URL; with login.service "hub", UPSTREAM_HUB_URL)'
  },
  UPSTREAM_LOGIN_REFRESH_URL: { member: 'login.refreshPath' },
  UPSTREAM_LOGIN_TOKEN_FIELD: { member: 'login.tokenField' },
  UPSTREAM_LOGIN_EXPIRES_FIELD: { member: 'login.expiresField' },
  UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD: { member: 'login.refreshTokenField' },
  UPSTREAM_LOGIN_TOKEN_SCHEME: { member: 'tokenScheme' },
  UPSTREAM_LOGIN_BODY: {
    member: 'login.body, whose "{username}" and "{password}" UPSTREAM_LOGIN_USERNAME and ' +
      'UPSTREAM_LOGIN_PASSWORD fill'
  },
  UPSTREAM_LOGIN_RENEW_BEFORE_SECONDS: { member: 'login.renewBeforeSeconds' },
  UPSTREAM_LOGIN_MIN_INTERVAL_SECONDS: { member: 'login.minIntervalSeconds' },
  UPSTREAM_CONNECT_TIMEOUT_MS: { member: 'connections.connectTimeoutMs' },
  UPSTREAM_HEADERS_TIMEOUT_MS: { member: 'defaults.timeouts.headersMs' },
  UPSTREAM_BODY_TIMEOUT_MS: { member: 'defaults.timeouts.bodyMs' },
  UPSTREAM_MAX_CONNECTIONS: { member: 'connections.max' },
  UPSTREAM_RETRIES: { member: 'retries.count' },
  UPSTREAM_RETRY_BASE_MS: { member: 'retries.baseMs' },
  UPSTREAM_RETRY_MAX_MS: { member: 'retries.maxMs' },
  BREAKER_ERROR_PERCENTAGE: { member: 'breaker.errorPercentage' },
  BREAKER_VOLUME_THRESHOLD: { member: 'breaker.volumeThreshold' },
  BREAKER_WINDOW_MS: { member: 'breaker.windowMs' },
  BREAKER_RESET_MS: { member: 'breaker.resetMs' },
  REDIS_PASSWORD: {
    instead: 'put the password in REDIS_URL (redis://user:PASSWORD@host, percent-encoded), ' +
      'and give the URL as REDIS_URL_FILE to keep it in a secret'
  },
  CACHE_MAX_ENTRIES: {
    instead: 'CACHE_MAX_BYTES charges each entry its bookkeeping, so it bounds their number too; ' +
      'unset it'
  }
}

/** Removed settings that were secrets, and so could be given as files. */
const REMOVED_FILES: readonly string[] = ['UPSTREAM_LOGIN_BODY', 'REDIS_PASSWORD']

/** The removed setting a variable names (`REDIS_PASSWORD_FILE`: REDIS_PASSWORD), if any. */
export function removedSetting (name: string): string | undefined {
  if (name in REMOVED_SETTINGS) return name
  const file = name.endsWith('_FILE') ? name.slice(0, -'_FILE'.length) : undefined
  return file !== undefined && REMOVED_FILES.includes(file) ? file : undefined
}

/** The line that refuses a removed setting still set. */
export function removedProblem (name: string, setting: string): string {
  const replacement = REMOVED_SETTINGS[setting]!
  return 'member' in replacement
    ? `${name}: removed in 1.0.0, now said by the hub profile's ${replacement.member} ` +
      `(${FROM_ENV_COMMAND} writes the profile your settings meant)`
    : `${name}: removed in 1.0.0; ${replacement.instead}`
}

/** One problem per removed setting `env` sets (an empty value is unset, as for every setting). */
export function removedSettingProblems (
  env: Readonly<Record<string, string | undefined>>
): string[] {
  const problems: string[] = []
  for (const [name, value] of Object.entries(env)) {
    const setting = removedSetting(name)
    if (setting === undefined || value === undefined || value.trim() === '') continue
    problems.push(removedProblem(name, setting))
  }
  return problems.sort()
}
