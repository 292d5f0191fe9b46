import { randomBytes } from 'node:crypto'

// The hub's login operation is unpublished (docs/hub.md#open-points). The
// sandbox models a plausible one so the gateway's login mode is tested for
// real: POST a username and password, get an access token that expires, and,
// as the hub's public callers show it, a refresh token that a second POST
// (Authorization: Bearer <refresh token>) trades for a new pair (login.ts).

export const SANDBOX_LOGIN_PATH = '/auth/login'
export const SANDBOX_REFRESH_PATH = '/auth/refresh'
export const SANDBOX_USERNAME = 'sandbox-user'
export const SANDBOX_PASSWORD = 'sandbox-password-3e9d'

export interface TokenBook {
  /** The static token and any extra tokens accepted verbatim. */
  staticTokens: Set<string>
  /** True when the Authorization header carries an accepted token (issued ones with or without `Bearer `). */
  accepts (header: string | string[] | undefined): boolean
  /** Issues a token valid for ttlMs. */
  issue (ttlMs: number): string
  /** Every issued token stops being accepted (the hub's tokens expired). */
  expireAll (): void
  /** Issues a refresh token valid for ttlMs. */
  issueRefresh (ttlMs: number): string
  /**
   * True when the Authorization header carries a live refresh token, which is
   * then used up: each refresh token renews once (the next one comes with the
   * renewal), so that two renewals with one token show as a refusal.
   */
  redeemRefresh (header: string | string[] | undefined): boolean
  /** Every refresh token stops being accepted (the hub revoked them, or they expired). */
  revokeRefreshTokens (): void
}

export function createTokenBook (staticTokens: string[], now: () => number = Date.now): TokenBook {
  const issued = new Map<string, number>()
  const refreshTokens = new Map<string, number>()
  const book: TokenBook = {
    staticTokens: new Set(staticTokens),
    accepts (header) {
      if (typeof header !== 'string') return false
      if (book.staticTokens.has(header)) return true
      const token = header.startsWith('Bearer ') ? header.slice(7) : header
      const expiresAt = issued.get(token)
      if (expiresAt === undefined) return false
      if (expiresAt <= now()) {
        issued.delete(token)
        return false
      }
      return true
    },
    issue (ttlMs) {
      const token = `sbx-session-${randomBytes(12).toString('hex')}`
      issued.set(token, now() + ttlMs)
      return token
    },
    expireAll () {
      issued.clear()
    },
    issueRefresh (ttlMs) {
      const token = `sbx-refresh-${randomBytes(12).toString('hex')}`
      refreshTokens.set(token, now() + ttlMs)
      return token
    },
    redeemRefresh (header) {
      if (typeof header !== 'string' || !/^bearer /i.test(header)) return false
      const token = header.slice(7).trim()
      const expiresAt = refreshTokens.get(token)
      refreshTokens.delete(token)
      return expiresAt !== undefined && expiresAt > now()
    },
    revokeRefreshTokens () {
      refreshTokens.clear()
    }
  }
  return book
}
