import type { RawConfig } from './schema.ts'

/**
 * The rules between the credential settings that the schema cannot say:
 * how login mode is given the hub account. One line per problem, naming
 * the settings, never a value.
 */
export function credentialProblems (config: RawConfig, hubConfigured: boolean): string[] {
  const username = config.UPSTREAM_LOGIN_USERNAME !== undefined
  const password = config.UPSTREAM_LOGIN_PASSWORD !== undefined
  if (username !== password) {
    const [missing, given] = username
      ? ['UPSTREAM_LOGIN_PASSWORD', 'UPSTREAM_LOGIN_USERNAME']
      : ['UPSTREAM_LOGIN_USERNAME', 'UPSTREAM_LOGIN_PASSWORD']
    return [`${missing}: is required with ${given}`]
  }
  if (hubConfigured && config.UPSTREAM_CREDENTIALS === 'login' && !username) {
    return ['UPSTREAM_LOGIN_USERNAME: is required when UPSTREAM_CREDENTIALS=login, with ' +
      'UPSTREAM_LOGIN_PASSWORD (or their *_FILE)']
  }
  return []
}
