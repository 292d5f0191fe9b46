import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../clock.ts'
import type { GatewayConfig } from '../config/resolve.ts'
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

export function createCredentials (config: GatewayConfig, { log, tokens, clock, onLogin, onRefresh }: CredentialsDeps): Credentials {
  switch (config.UPSTREAM_CREDENTIALS) {
    case 'forward':
      return forwardCredentials()
    case 'login':
      return loginCredentials({
        url: config.UPSTREAM_LOGIN_URL,
        body: config.UPSTREAM_LOGIN_BODY,
        ...(config.UPSTREAM_LOGIN_REFRESH_URL === undefined ? {} : { refreshUrl: config.UPSTREAM_LOGIN_REFRESH_URL }),
        fields: {
          token: config.UPSTREAM_LOGIN_TOKEN_FIELD,
          expiresIn: config.UPSTREAM_LOGIN_EXPIRES_FIELD,
          refreshToken: config.UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD
        },
        // `none`: the token alone (an empty setting is read as unset).
        scheme: config.UPSTREAM_LOGIN_TOKEN_SCHEME.toLowerCase() === 'none' ? '' : config.UPSTREAM_LOGIN_TOKEN_SCHEME,
        renewBeforeMs: config.UPSTREAM_LOGIN_RENEW_BEFORE_SECONDS * 1000,
        minIntervalMs: config.UPSTREAM_LOGIN_MIN_INTERVAL_SECONDS * 1000,
        timeoutMs: config.UPSTREAM_HEADERS_TIMEOUT_MS,
        log,
        tokens,
        clock,
        ...(onLogin === undefined ? {} : { onLogin }),
        ...(onRefresh === undefined ? {} : { onRefresh })
      })
    default:
      return staticCredentials({
        ...(config.UPSTREAM_ACCESS_TOKEN === undefined ? {} : { token: config.UPSTREAM_ACCESS_TOKEN }),
        ...(config.UPSTREAM_ACCESS_TOKEN_FILE === undefined ? {} : { file: config.UPSTREAM_ACCESS_TOKEN_FILE }),
        clock
      })
  }
}
