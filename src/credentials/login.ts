import type { FastifyBaseLogger } from 'fastify'
import { Agent, request } from 'undici'
import { systemClock, type Clock } from '../clock.ts'
import { gatewayError } from '../errors.ts'
import type { HubSession, TokenStore } from '../state/types.ts'
import { retryAfterSeconds, statusFailure, transportFailure } from '../upstream/failures.ts'
import { sessionFrom, type SessionFields } from './session-answer.ts'
import type { Credentials } from './types.ts'

export interface LoginOptions {
  url: string
  /** The JSON body POSTed to the login address. */
  body: string
  /**
   * The hub's token renewal: POSTed with `Authorization: Bearer <refresh
   * token>`, answered like the login. Unset: every renewal is a login.
   */
  refreshUrl?: string
  /** Where the answers hold the token, its lifetime and the refresh token. */
  fields: SessionFields
  /** `Bearer`, or empty for the token alone. */
  scheme: string
  renewBeforeMs: number
  /**
   * At most one renewal per this interval that is not due to the token's
   * lifetime: one forced by a hub 401, or one after a failed renewal.
   */
  minIntervalMs: number
  timeoutMs: number
  log: FastifyBaseLogger
  /** Where the session is held, and who renews it when several ask at once (state/). */
  tokens: TokenStore
  clock?: Clock
  /** Called after each login this process makes, with how it went (metrics). */
  onLogin?: (outcome: 'ok' | 'failed') => void
  /** Called after each refresh this process tries, with how it went (metrics). */
  onRefresh?: (outcome: 'ok' | 'refused' | 'failed') => void
}

interface Answer { status: number, text: string, retryAfter: string | undefined }

/**
 * A refresh the hub refused: the refresh token is no longer good (expired,
 * revoked, already used), so a login follows. 408 and 429 are the hub's
 * load, not a verdict on the token.
 */
const refused = (status: number): boolean => status >= 400 && status < 500 && status !== 408 && status !== 429

/**
 * The gateway logs in itself (docs/deployment.md#hub-credentials: the login operation is
 * not part of the hub's published interface, so its address, body and answer
 * fields are configuration: the hub profile's login, or the settings). The
 * session is cached and renewed before it expires: with the refresh token
 * when the hub gives one and a renewal address is known, by a new login when the hub refuses the
 * refresh or there is none. Concurrent callers share one renewal; a 401 from
 * the hub forces one, at most one per `minIntervalMs`: a hub that keeps
 * answering 401 (or a login that keeps failing) must not turn every request
 * into a login, which would be a fast way to lock the gateway's hub account.
 * Callers in between get the hub's 401 (UPSTREAM_AUTH_FAILED) at once. The
 * token store holds the session (its refresh token included) and runs the
 * renewal: it renews a session only while it is the one refused, so that a
 * session another holder already replaced is used without a renewal.
 */
export function loginCredentials (options: LoginOptions): Credentials {
  const { tokens, clock = systemClock } = options
  const agent = new Agent({ connect: { timeout: options.timeoutMs }, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs })
  // The session in use here: the store is asked only when it must be renewed.
  let session: HubSession | undefined
  let pending: Promise<HubSession> | undefined
  let forcedAt = -Infinity
  let failed: { at: number, error: unknown } | undefined

  async function post (url: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    let response
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { accept: 'application/json', ...headers },
        ...(body === undefined ? {} : { body })
      })
    } catch (error) {
      throw transportFailure(error, 'headers')
    }
    let text: string
    try {
      text = await response.body.text()
    } catch (error) {
      throw transportFailure(error, 'body')
    }
    return { status: response.statusCode, text, retryAfter: retryAfterSeconds(response.headers['retry-after']) }
  }

  /** The session in a 2xx answer, or undefined when it holds no token (or is no JSON). */
  function read (answer: Answer): { session: HubSession, lifetimeMs: number } | undefined {
    let parsed: unknown
    try {
      parsed = JSON.parse(answer.text)
    } catch {
      return undefined
    }
    return sessionFrom(parsed, { fields: options.fields, scheme: options.scheme, renewBeforeMs: options.renewBeforeMs, now: clock() })
  }

  async function login (): Promise<HubSession> {
    const answer = await post(options.url, { 'content-type': 'application/json' }, options.body)
    // The hub's login message is not passed on: it may echo the credentials.
    if (answer.status < 200 || answer.status >= 300) throw statusFailure(answer.status, undefined, answer.retryAfter)
    const fresh = read(answer)
    if (fresh === undefined) {
      throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: new Error(`the login answer holds no token at ${options.fields.token}`) })
    }
    options.log.info({ expiresInSeconds: Math.round(fresh.lifetimeMs / 1000), refreshToken: fresh.session.refreshToken !== undefined }, 'logged in to the hub')
    return fresh.session
  }

  /** The renewed session, or undefined when the hub refused the refresh token. */
  async function refresh (url: string, refreshToken: string): Promise<HubSession | undefined> {
    const answer = await post(url, { authorization: `Bearer ${refreshToken}` })
    if (refused(answer.status)) {
      options.log.warn({ upstreamStatus: answer.status }, 'the hub refused the refresh token: logging in')
      return undefined
    }
    if (answer.status < 200 || answer.status >= 300) throw statusFailure(answer.status, undefined, answer.retryAfter)
    const fresh = read(answer)
    if (fresh === undefined) {
      // Some hubs answer 200 with a failure text: a refusal all the same.
      options.log.warn({ field: options.fields.token }, 'the hub\'s refresh answer holds no token: logging in')
      return undefined
    }
    options.log.info({ expiresInSeconds: Math.round(fresh.lifetimeMs / 1000) }, 'renewed the hub token with the refresh token')
    // A hub that does not rotate refresh tokens answers without one: the one held stays good.
    return { ...fresh.session, ...(fresh.session.refreshToken === undefined ? { refreshToken } : {}) }
  }

  /** `run`, reported as `ok` (or as `outcome` of its result) or `failed` when it throws. */
  async function counted<T, O extends string> (run: () => Promise<T>, report: ((outcome: O | 'failed') => void) | undefined, outcome: (result: T) => O): Promise<T> {
    let result: T
    try {
      result = await run()
    } catch (error) {
      report?.('failed')
      throw error
    }
    report?.(outcome(result))
    return result
  }

  /** A session in place of `from`: by its refresh token when there is one and a renewal address, else by a login. */
  async function renewal (from: HubSession | undefined): Promise<HubSession> {
    const { refreshUrl } = options
    if (refreshUrl !== undefined && from?.refreshToken !== undefined) {
      const { refreshToken } = from
      const refreshed = await counted(() => refresh(refreshUrl, refreshToken), options.onRefresh, (fresh) => fresh === undefined ? 'refused' : 'ok')
      if (refreshed !== undefined) return refreshed
    }
    return await counted(login, options.onLogin, () => 'ok' as const)
  }

  /** A session in place of `from` (the one refused or due for renewal; undefined for the first), shared by every caller meanwhile. */
  function shared (from: HubSession | undefined, rejected: string | undefined): Promise<HubSession> {
    pending ??= tokens.renew(rejected, () => renewal(from)).then(
      (fresh) => { session = fresh; pending = undefined; failed = undefined; return fresh },
      (error: unknown) => { pending = undefined; failed = { at: clock(), error }; throw error }
    )
    return pending
  }

  const tooSoon = (at: number): boolean => clock() - at < options.minIntervalMs
  const renewAt = (held: HubSession): number => held.renewAt ?? held.expiresAt - options.renewBeforeMs

  return {
    mode: 'login',
    async authorization () {
      const now = clock()
      if (session !== undefined && now < renewAt(session)) return session.authorization
      // Still valid but due for renewal: renew in the background (unless a renewal
      // just failed: not one per request), use it meanwhile.
      if (session !== undefined && now < session.expiresAt) {
        if (pending === undefined && failed !== undefined && tooSoon(failed.at)) return session.authorization
        shared(session, session.authorization).catch((error: unknown) => options.log.warn({ err: error }, 'hub token renewal failed'))
        return session.authorization
      }
      // A renewal just failed: its error again, rather than another one so soon.
      if (pending === undefined && failed !== undefined && tooSoon(failed.at)) throw failed.error
      return (await shared(session, session?.authorization)).authorization
    },
    identity: () => 'login',
    async refresh (used) {
      if (session !== undefined && session.authorization !== used) return true
      const from = session
      if (pending === undefined) {
        if (tooSoon(forcedAt)) return false
        forcedAt = clock()
        session = undefined
      }
      await shared(from, used)
      return true
    },
    async close () {
      await agent.close()
    }
  }
}
