import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../config/resolve.ts'
import { forwardCredentials } from './forward.ts'
import { loginCredentials } from './login.ts'
import { staticCredentials } from './static.ts'
import type { Credentials } from './types.ts'

export type { Caller, Credentials } from './types.ts'
export { FORWARD_HEADER } from './forward.ts'

export function createCredentials (config: GatewayConfig, log: FastifyBaseLogger): Credentials {
  switch (config.UPSTREAM_CREDENTIALS) {
    case 'forward':
      return forwardCredentials()
    case 'login':
      return loginCredentials({
        url: config.UPSTREAM_LOGIN_URL,
        body: config.UPSTREAM_LOGIN_BODY,
        tokenField: config.UPSTREAM_LOGIN_TOKEN_FIELD,
        expiresField: config.UPSTREAM_LOGIN_EXPIRES_FIELD,
        scheme: config.UPSTREAM_LOGIN_TOKEN_SCHEME,
        renewBeforeMs: config.UPSTREAM_LOGIN_RENEW_BEFORE_SECONDS * 1000,
        minIntervalMs: config.UPSTREAM_LOGIN_MIN_INTERVAL_SECONDS * 1000,
        timeoutMs: config.UPSTREAM_HEADERS_TIMEOUT_MS,
        log
      })
    default:
      return staticCredentials({
        ...(config.UPSTREAM_ACCESS_TOKEN === undefined ? {} : { token: config.UPSTREAM_ACCESS_TOKEN }),
        ...(config.UPSTREAM_ACCESS_TOKEN_FILE === undefined ? {} : { file: config.UPSTREAM_ACCESS_TOKEN_FILE })
      })
  }
}
