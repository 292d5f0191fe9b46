import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from './constants.ts'
import { SANDBOX_LOGIN_PATH, SANDBOX_PASSWORD, SANDBOX_REFRESH_PATH, SANDBOX_USERNAME } from './tokens.ts'
import type { SandboxOptions } from './types.ts'

/** Where the login settings find what the envelope form of the login answer holds (login.ts). */
const ENVELOPE_FIELDS = {
  UPSTREAM_LOGIN_TOKEN_FIELD: 'item.access_token',
  UPSTREAM_LOGIN_EXPIRES_FIELD: 'item.expires_in',
  UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD: 'item.refresh_token'
}

/**
 * The gateway's settings that point it at a sandbox hub at `url`, with the
 * sandbox's credentials and its modelled login and renewal, as environment
 * variables. One place for the server's sandbox mode, the OpenAPI script and
 * the tests; explicit settings are spread after these and win. `login` says
 * how that sandbox was started (its login answer and addresses), so that the
 * login settings match it. The sandbox names the gateway's variables here and
 * imports nothing of it.
 */
export function sandboxEnv (url: string, login: Pick<SandboxOptions, 'loginAnswer' | 'loginPath' | 'refreshPath'> = {}): Record<string, string> {
  return {
    UPSTREAM_HUB_URL: url,
    UPSTREAM_BASE_URL: url,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: SANDBOX_PLATFORM_ID,
    UPSTREAM_LOGIN_URL: `${url}${login.loginPath ?? SANDBOX_LOGIN_PATH}`,
    UPSTREAM_LOGIN_REFRESH_URL: `${url}${login.refreshPath ?? SANDBOX_REFRESH_PATH}`,
    UPSTREAM_LOGIN_USERNAME: SANDBOX_USERNAME,
    UPSTREAM_LOGIN_PASSWORD: SANDBOX_PASSWORD,
    ...(login.loginAnswer === 'envelope' ? ENVELOPE_FIELDS : {})
  }
}
