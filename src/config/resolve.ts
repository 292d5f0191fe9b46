import { ConfigError, isSandboxMode, loadConfig, type Config } from './load.ts'
import { SECRET_SETTINGS } from './secret-files.ts'

/**
 * The settings resolveConfig narrows: the hub's addresses and credentials, and how the hub token is
 * got.
 */
type Narrowed = 'UPSTREAM_HUB_URL' | 'UPSTREAM_BASE_URL' | 'UPSTREAM_API_KEY' | 'PLATFORM_ID' |
  'UPSTREAM_CREDENTIALS' | 'UPSTREAM_LOGIN_USERNAME' | 'UPSTREAM_LOGIN_PASSWORD'

/**
 * How the gateway gets its hub token (UPSTREAM_CREDENTIALS), with what login
 * mode needs: the hub account, which the profile's login.body places. The
 * login's address is the hub profile's login.path (profile/resolve.ts,
 * which requires it).
 */
export type CredentialSettings =
  | {
    UPSTREAM_CREDENTIALS: 'login'
    UPSTREAM_LOGIN_USERNAME: string
    UPSTREAM_LOGIN_PASSWORD: string
  }
  | {
    UPSTREAM_CREDENTIALS: 'static' | 'forward'
    UPSTREAM_LOGIN_USERNAME?: string
    UPSTREAM_LOGIN_PASSWORD?: string
  }

/**
 * The configuration the gateway runs with: the hub is known (configured, or
 * the built-in sandbox's), so its addresses, API key and platform id are
 * set, and so is the login's body in login mode.
 */
export type GatewayConfig = Omit<Config, Narrowed> & {
  UPSTREAM_HUB_URL: string
  UPSTREAM_BASE_URL: string
  UPSTREAM_API_KEY: string
  PLATFORM_ID: string
} & CredentialSettings

export interface ResolveOptions {
  /**
   * The settings of the built-in sandbox started because no hub is
   * configured (the sandbox's `sandboxEnv`): the environment's settings
   * go over them.
   */
  sandbox?: Readonly<Record<string, string>>
}

/**
 * Reads and checks the configuration (loadConfig: the schema, then the rules
 * between settings) and returns it narrowed to what the gateway runs with.
 * Without a configured hub, the sandbox's settings are taken under the
 * environment's non-empty ones. Throws ConfigError with one line per problem.
 */
export function resolveConfig (
  env: Record<string, string | undefined>,
  { sandbox }: ResolveOptions = {}
): GatewayConfig {
  let config = loadConfig(env)
  if (isSandboxMode(config) && sandbox !== undefined) {
    // SANDBOX was read above; beside the sandbox's own hub addresses it would be a contradiction.
    const given = Object.fromEntries(
      Object.entries(env).filter(
        ([name, value]) => value !== undefined && value.trim() !== '' && name !== 'SANDBOX'
      )
    )
    const defaults = Object.fromEntries(
      Object.entries(sandbox).filter(([name]) => !replacedBy(name, given))
    )
    config = loadConfig({ ...defaults, ...given })
  }
  return narrowed(config)
}

/**
 * Whether the environment gives a sandbox setting another way: a secret as
 * its file (a token file replaces the sandbox's token rather than conflicting
 * with it).
 */
function replacedBy (name: string, given: Record<string, string | undefined>): boolean {
  const secret = SECRET_SETTINGS.find(setting => setting === name)
  return secret !== undefined && given[`${secret}_FILE`] !== undefined
}

/**
 * The narrowed type, by checks rather than a cast. loadConfig's rules
 * already require these settings once a hub is configured; what is left is
 * sandbox mode without a started sandbox.
 */
function narrowed (config: Config): GatewayConfig {
  const { UPSTREAM_HUB_URL, UPSTREAM_BASE_URL, UPSTREAM_API_KEY, PLATFORM_ID } = config
  const { UPSTREAM_CREDENTIALS } = config
  if (
    UPSTREAM_HUB_URL === undefined ||
    UPSTREAM_BASE_URL === undefined ||
    UPSTREAM_API_KEY === undefined ||
    PLATFORM_ID === undefined
  ) {
    const missing = Object.entries({
      UPSTREAM_HUB_URL,
      UPSTREAM_BASE_URL,
      UPSTREAM_API_KEY,
      PLATFORM_ID
    }).filter(([, value]) => value === undefined)
    throw new ConfigError(
      missing.map(
        ([name]) =>
          `${name}: is required (no hub is configured and no built-in sandbox was started)`
      )
    )
  }
  const hub = { ...config, UPSTREAM_HUB_URL, UPSTREAM_BASE_URL, UPSTREAM_API_KEY, PLATFORM_ID }
  if (UPSTREAM_CREDENTIALS !== 'login') return { ...hub, UPSTREAM_CREDENTIALS }
  const { UPSTREAM_LOGIN_USERNAME, UPSTREAM_LOGIN_PASSWORD } = config
  if (UPSTREAM_LOGIN_USERNAME === undefined || UPSTREAM_LOGIN_PASSWORD === undefined) {
    throw new ConfigError([
      'UPSTREAM_LOGIN_USERNAME with UPSTREAM_LOGIN_PASSWORD: are required when ' +
        'UPSTREAM_CREDENTIALS=login'
    ])
  }
  return { ...hub, UPSTREAM_CREDENTIALS, UPSTREAM_LOGIN_USERNAME, UPSTREAM_LOGIN_PASSWORD }
}
