import type { FastifyBaseLogger } from 'fastify'
import { Agent, request } from 'undici'
import { systemClock, type Clock } from '../clock.ts'
import { gatewayError } from '../errors.ts'
import type { HubSession, TokenStore } from '../state/types.ts'
import { retryAfterSeconds, statusFailure, transportFailure } from '../upstream/failures.ts'
import type { Credentials } from './types.ts'

export interface LoginOptions {
  url: string
  /** The JSON body POSTed to the login address. */
  body: string
  tokenField: string
  expiresField: string
  /** `Bearer`, or empty for the token alone. */
  scheme: string
  renewBeforeMs: number
  /**
   * At most one login per this interval that is not due to the token's
   * lifetime: one forced by a hub 401, or one after a failed login.
   */
  minIntervalMs: number
  timeoutMs: number
  log: FastifyBaseLogger
  /** Where the session is held, and who logs in when several ask at once (state/). */
  tokens: TokenStore
  clock?: Clock
  /** Called after each login this process makes, with how it went (metrics). */
  onLogin?: (outcome: 'ok' | 'failed') => void
}

function pick (value: unknown, path: string): unknown {
  let out = value
  for (const part of path.split('.')) {
    if (out === null || typeof out !== 'object') return undefined
    out = (out as Record<string, unknown>)[part]
  }
  return out
}

/**
 * The gateway logs in itself (docs/hub.md#authentication: the login operation is not
 * published, so its address, body and answer fields are configuration).
 * The token is cached and renewed before it expires; concurrent callers
 * share one login; a 401 from the hub forces one new login, at most one per
 * `minIntervalMs`: a hub that keeps answering 401 (or a login that keeps
 * failing) must not turn every request into a login, which would be a fast
 * way to lock the gateway's hub account. Callers in between get the hub's
 * 401 (UPSTREAM_AUTH_FAILED) at once. The token store holds the session and
 * makes the login: it renews a session only while it is the one refused, so
 * that a session another holder already replaced is used without a login.
 */
export function loginCredentials (options: LoginOptions): Credentials {
  const { tokens, clock = systemClock } = options
  const agent = new Agent({ connect: { timeout: options.timeoutMs }, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs })
  // The session in use here: the store is asked only when it must be renewed.
  let session: HubSession | undefined
  let pending: Promise<HubSession> | undefined
  let forcedAt = -Infinity
  let failed: { at: number, error: unknown } | undefined

  async function login (): Promise<HubSession> {
    let response
    try {
      response = await request(options.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: options.body
      })
    } catch (error) {
      throw transportFailure(error, 'headers')
    }
    const text = await response.body.text().catch(() => '')
    if (response.statusCode < 200 || response.statusCode >= 300) {
      // The hub's login message is not passed on: it may echo the credentials.
      throw statusFailure(response.statusCode, undefined, retryAfterSeconds(response.headers['retry-after']))
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: error })
    }
    const token = pick(parsed, options.tokenField)
    const expiresIn = Number(pick(parsed, options.expiresField))
    if (typeof token !== 'string' || token === '') {
      throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: new Error(`login answer has no ${options.tokenField}`) })
    }
    const lifetimeMs = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : 5 * 60_000
    options.log.info({ expiresInSeconds: Math.round(lifetimeMs / 1000) }, 'logged in to the hub')
    return { authorization: options.scheme === '' ? token : `${options.scheme} ${token}`, expiresAt: clock() + lifetimeMs }
  }

  async function counted (): Promise<HubSession> {
    try {
      const session = await login()
      options.onLogin?.('ok')
      return session
    } catch (error) {
      options.onLogin?.('failed')
      throw error
    }
  }

  /** A session in place of `rejected` (the one refused or due for renewal; undefined for the first). */
  function shared (rejected: string | undefined): Promise<HubSession> {
    pending ??= tokens.renew(rejected, counted).then(
      (fresh) => { session = fresh; pending = undefined; failed = undefined; return fresh },
      (error: unknown) => { pending = undefined; failed = { at: clock(), error }; throw error }
    )
    return pending
  }

  const tooSoon = (at: number): boolean => clock() - at < options.minIntervalMs

  return {
    mode: 'login',
    async authorization () {
      const now = clock()
      if (session !== undefined && now < session.expiresAt - options.renewBeforeMs) return session.authorization
      // Still valid but due for renewal: renew in the background, use it meanwhile.
      if (session !== undefined && now < session.expiresAt) {
        shared(session.authorization).catch((error: unknown) => options.log.warn({ err: error }, 'hub token renewal failed'))
        return session.authorization
      }
      // A login just failed: its error again, rather than another login so soon.
      if (pending === undefined && failed !== undefined && tooSoon(failed.at)) throw failed.error
      return (await shared(session?.authorization)).authorization
    },
    identity: () => 'login',
    async refresh (used) {
      if (session !== undefined && session.authorization !== used) return true
      if (pending === undefined) {
        if (tooSoon(forcedAt)) return false
        forcedAt = clock()
        session = undefined
      }
      await shared(used)
      return true
    },
    async close () {
      await agent.close()
    }
  }
}
