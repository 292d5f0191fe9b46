import type { IncomingHttpHeaders } from 'node:http'
import { json, message, type Answer } from './answer.ts'
import type { SandboxConfig } from './config.ts'
import type { RequestBody } from './context.ts'
import type { Decision } from './dispatch.ts'
import { SANDBOX_PASSWORD, SANDBOX_USERNAME } from './tokens.ts'

// The modelled login and its renewal (tokens.ts). Two forms of answer:
// - plain (the default): `{access_token, token_type, expires_in}` at the top,
//   plus `refresh_token` when the sandbox issues refresh tokens;
// - envelope, as the hub's public callers show it: `{"status": "success",
//   "message": …, "item": {access_token, expires_in, refresh_expires_in,
//   refresh_token, token_type: "bearer"}}`, and `{"status": "failed",
//   "message": …}` with the refusal's status.

export type AuthOperation = 'login' | 'refresh'

/** The modelled operation at `path` (the trailing slash optional), if any. */
export function authOperation (path: string, config: SandboxConfig): AuthOperation | undefined {
  const bare = path.replace(/\/+$/, '')
  if (bare === config.loginPath) return 'login'
  if (bare === config.refreshPath) return 'refresh'
  return undefined
}

function refusal (config: SandboxConfig, status: number, text: string): Answer {
  return config.loginAnswer === 'envelope'
    ? json(status, { status: 'failed', message: text })
    : message(status, text)
}

/** A new access token (and refresh token, when issued) in the configured form. */
function issued (config: SandboxConfig, text: string): Answer {
  const accessToken = config.tokens.issue(config.loginTokenTtlMs)
  const refreshToken = config.refreshTokens
    ? config.tokens.issueRefresh(config.refreshTokenTtlMs)
    : undefined
  const expiresIn = Math.floor(config.loginTokenTtlMs / 1000)
  if (config.loginAnswer === 'plain') {
    return json(200, {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: expiresIn,
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken })
    })
  }
  return json(200, {
    status: 'success',
    message: text,
    item: {
      access_token: accessToken,
      expires_in: expiresIn,
      // As the hub's callers show it: 0, although its refresh tokens do expire.
      refresh_expires_in: 0,
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      token_type: 'bearer',
      scope: 'profile email'
    }
  })
}

/**
 * The login (POST a username and password) or the renewal (POST with Authorization: Bearer <refresh
 * token>).
 */
export function authDecision (
  operation: AuthOperation,
  method: string,
  headers: IncomingHttpHeaders,
  body: RequestBody,
  config: SandboxConfig
): Decision {
  const decision = (answer: Answer): Decision => ({
    operation,
    params: {},
    values: {},
    answer,
    extraDelayMs: 0
  })
  if (method !== 'POST') return decision(message(405, 'Method Not Allowed', { allow: 'POST' }))
  if (operation === 'refresh') {
    if (!config.tokens.redeemRefresh(headers.authorization)) {
      return decision(refusal(config, 401, 'Refresh ' +
      'token tidak valid atau kedaluwarsa'))
    }
    return decision(issued(config, 'Token berhasil diperbarui'))
  }
  const value =
    body.kind === 'json' ? (body.value as { username?: unknown; password?: unknown } | null) : null
  if (value?.username !== SANDBOX_USERNAME || value.password !== SANDBOX_PASSWORD) {
    return decision(refusal(config, 401, 'Login ' +
    'gagal'))
  }
  return decision(issued(config, 'Login berhasil'))
}
