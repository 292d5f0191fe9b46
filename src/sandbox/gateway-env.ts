import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from './constants.ts'
import { SANDBOX_LOGIN_PATH, SANDBOX_PASSWORD, SANDBOX_USERNAME } from './tokens.ts'

/**
 * The gateway's settings that point it at a sandbox hub at `url`, with the
 * sandbox's credentials and its modelled login, as environment variables.
 * One place for the server's sandbox mode, the OpenAPI script and the tests;
 * explicit settings are spread after these and win. The sandbox names the
 * gateway's variables here and imports nothing of it.
 */
export function sandboxEnv (url: string): Record<string, string> {
  return {
    UPSTREAM_HUB_URL: url,
    UPSTREAM_BASE_URL: url,
    UPSTREAM_API_KEY: SANDBOX_API_KEY,
    UPSTREAM_ACCESS_TOKEN: SANDBOX_ACCESS_TOKEN,
    PLATFORM_ID: SANDBOX_PLATFORM_ID,
    UPSTREAM_LOGIN_URL: `${url}${SANDBOX_LOGIN_PATH}`,
    UPSTREAM_LOGIN_USERNAME: SANDBOX_USERNAME,
    UPSTREAM_LOGIN_PASSWORD: SANDBOX_PASSWORD
  }
}
