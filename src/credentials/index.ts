import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { loginBody } from '../profile/login-body.ts'
import type { ProfileInForce } from '../profile/resolve.ts'
import type { TokenStore } from '../state/types.ts'
import { forwardCredentials } from './forward.ts'
import { loginCredentials } from './login.ts'
import { staticCredentials } from './static.ts'
import type { Credentials } from './types.ts'

export type { Caller, Credentials } from './types.ts'
export { FORWARD_HEADER } from './forward.ts'

export interface CredentialsDeps {
  log: FastifyBaseLogger
  /** Holds the hub session in login mode (state/). */
  tokens: TokenStore
  clock: Clock
  /** Called after each login (login mode), for metrics. */
  onLogin?: (outcome: 'ok' | 'failed') => void
  /** Called after each renewal by refresh token (login mode), for metrics. */
  onRefresh?: (outcome: 'ok' | 'refused' | 'failed') => void
}

/**
 * The credentials UPSTREAM_CREDENTIALS names. Login mode reads its addresses,
 * its body, the answers' fields, the token's scheme, its lifetimes and its
 * timeout from the hub profile in force (`profile`); the account from the
 * settings.
 */
export function createCredentials (
  config: GatewayConfig,
  profile: Pick<ProfileInForce, 'login' | 'loginAddresses' | 'tokenScheme' | 'timeouts'>,
  { log, tokens, clock, onLogin, onRefresh }: CredentialsDeps
): Credentials {
  switch (config.UPSTREAM_CREDENTIALS) {
    case 'forward':
      return forwardCredentials()
    case 'login': {
      const { url, refreshUrl } = profile.loginAddresses
      // resolveProfile refuses login mode without an address.
      if (url === undefined) throw new Error('login mode without a login address')
      return loginCredentials({
        url,
        body: loginBody(profile.login.body, {
          username: config.UPSTREAM_LOGIN_USERNAME,
          password: config.UPSTREAM_LOGIN_PASSWORD
        }),
        ...(refreshUrl === undefined ? {} : { refreshUrl }),
        fields: {
          token: profile.login.tokenField,
          expiresIn: profile.login.expiresField,
          refreshToken: profile.login.refreshTokenField
        },
        scheme: profile.tokenScheme,
        renewBeforeMs: profile.login.renewBeforeSeconds * 1000,
        minIntervalMs: profile.login.minIntervalSeconds * 1000,
        timeoutMs: profile.timeouts.headersMs,
        log,
        tokens,
        clock,
        ...(onLogin === undefined ? {} : { onLogin }),
        ...(onRefresh === undefined ? {} : { onRefresh })
      })
    }
    default:
      return staticCredentials({
        ...(config.UPSTREAM_ACCESS_TOKEN === undefined
          ? {}
          : { token: config.UPSTREAM_ACCESS_TOKEN }),
        ...(config.UPSTREAM_ACCESS_TOKEN_FILE === undefined
          ? {}
          : { file: config.UPSTREAM_ACCESS_TOKEN_FILE }),
        clock
      })
  }
}
