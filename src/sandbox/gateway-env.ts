import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from './constants.ts'
import type { HubProfile } from './profile-file.ts'
import {
  SANDBOX_LOGIN_PATH, SANDBOX_PASSWORD, SANDBOX_REFRESH_PATH, SANDBOX_USERNAME
} from './tokens.ts'
import type { SandboxOptions } from './types.ts'

/** Where the envelope form of the login answer keeps what the gateway reads (login.ts). */
const ENVELOPE_FIELDS = {
  tokenField: 'item.access_token',
  expiresField: 'item.expires_in',
  refreshTokenField: 'item.refresh_token'
}

/**
 * The gateway's settings that point it at a sandbox hub at `url`, with the
 * sandbox's credentials and account, as environment variables. One place
 * for the server's sandbox mode, the OpenAPI script and the tests; explicit
 * settings are spread after these and win. The sandbox names the gateway's
 * variables here and imports nothing of it.
 */
export function sandboxEnv (url: string): Record<string, string> {
  return {
    UPSTREAM_HUB_URL: url,
    UPSTREAM_BASE_URL: url,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: SANDBOX_PLATFORM_ID,
    UPSTREAM_LOGIN_USERNAME: SANDBOX_USERNAME,
    UPSTREAM_LOGIN_PASSWORD: SANDBOX_PASSWORD
  }
}

/**
 * The hub profile of a sandbox started without one: the documented hub,
 * with the login the sandbox models (which the hub's document does not
 * publish) at its addresses and in the form of its answers. `login` says
 * how that sandbox was started. The gateway takes it as its built-in
 * profile when it fronts the sandbox.
 */
export function sandboxProfile (
  login: Pick<SandboxOptions, 'loginAnswer' | 'loginPath' | 'refreshPath'> = {}
): HubProfile {
  return {
    name: 'sandbox',
    login: {
      path: login.loginPath ?? SANDBOX_LOGIN_PATH,
      refreshPath: login.refreshPath ?? SANDBOX_REFRESH_PATH,
      ...(login.loginAnswer === 'envelope' ? ENVELOPE_FIELDS : {})
    }
  }
}
