import type { FaultName } from './faults.ts'

export interface SandboxOptions {
  /**
   * A hub profile to play (docs/hub.md#playing-a-profile): the path of its JSON file, or
   * the profile itself. Not with apiKeyHeader or pathSegment, which it says.
   */
  profile?: string | object
  /** Listen address, default 127.0.0.1. */
  host?: string
  /** Listen port, default 0 (a free port). */
  port?: number
  /** API key the hub accepts, default SANDBOX_API_KEY. */
  apiKey?: string
  /** Name of the API key header, matched case-insensitively, default customs-api-key. */
  apiKeyHeader?: string
  /** Access token, compared verbatim with the Authorization header, default SANDBOX_ACCESS_TOKEN. */
  accessToken?: string
  /** The path segment docs/hub.md writes HUB, default HUB. */
  pathSegment?: string
  /** idPlatform accepted in offers (4.8), default SANDBOX_PLATFORM_ID. */
  platformId?: string
  /** Delay added before every answer, default 0. */
  latencyMs?: number
  /** Uniform jitter of +/- jitterMs on latencyMs, default 0. */
  jitterMs?: number
  /** Delay of the SLOW fault, default 3000. */
  slowMs?: number
  /** Further Authorization values accepted verbatim (callers' own tokens, for forward mode). */
  acceptedTokens?: string[]
  /** Lifetime of tokens issued by the login operation, default 300000 (5 min). */
  loginTokenTtlMs?: number
  /**
   * Form of the login and renewal answers: `plain` (default) `{access_token,
   * token_type, expires_in}`; `envelope`, as the hub's public callers show
   * it, `{status, message, item: {access_token, expires_in, refresh_token, …}}`.
   */
  loginAnswer?: 'plain' | 'envelope'
  /** Whether the login and renewal answers carry a refresh token, default: with the envelope only. */
  refreshTokens?: boolean
  /** Lifetime of refresh tokens, default 86400000 (a day); each renews once. */
  refreshTokenTtlMs?: number
  /** Address of the login operation, default SANDBOX_LOGIN_PATH (`/auth/login`). */
  loginPath?: string
  /** Address of the renewal, default SANDBOX_REFRESH_PATH (`/auth/refresh`). */
  refreshPath?: string
  /** The time (ms since the epoch) by which issued tokens expire, default Date.now; a test can move it. */
  now?: () => number
  /** How many of the newest requests `requests` keeps, default 1000 (counts cover them all). */
  recordLimit?: number
  /** Called once per request received, with what the sandbox did (`npm run sandbox` prints it). */
  onRequest?: (entry: SandboxRequestLog) => void
}

/** One request as the standalone sandbox logs it. */
export interface SandboxRequestLog {
  method: string
  /** Raw path, without the query string. */
  path: string
  /** As in RecordedRequest: the operation's name, 'login' or 'unknown'. */
  operation: string
  /** The fault played, if any. */
  fault: FaultName | undefined
  /** The answer's status, or what happened instead of one. */
  status: number | 'hang' | 'reset'
  /** The delay before the answer (latency, jitter, SLOW). */
  delayMs: number
}

export interface RecordedRequest {
  /** Operation name as docs/hub.md spells it (noblbc20, host-to-host, ...), 'unknown' when no address matched. */
  operation: string
  method: string
  /** Raw path, without the query string. */
  path: string
  /** Query string parameters (first value of each name). */
  query: Record<string, string>
  /** The operation's listed parameters as resolved from path segments and query string. */
  params: Record<string, string>
  /**
   * The same by what they mean, as a hub profile's `params` names them
   * (npwp, blNo, blDate, pibNo, containerNo, sp2Id, bookingRequestId);
   * values as received.
   */
  values: Record<string, string>
  headers: Record<string, string | string[] | undefined>
  /** Parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown
  /** Date.now() when the request was received. */
  at: number
}

export interface Sandbox {
  /** Base address, e.g. http://127.0.0.1:40123; serves as both {hub_url} and {base_url}. */
  url: string
  /** The name of the hub profile it plays; undefined: none (the default). */
  profile?: string
  /**
   * The newest requests received (at most `recordLimit`), oldest first: a
   * bounded ring, so that a long-running sandbox does not grow.
   */
  requests: RecordedRequest[]
  /** Number of requests received since start or `reset()`, for one operation when given (not bounded by the ring). */
  count (operation?: string): number
  /** Forgets the recorded requests and the counts. */
  reset (): void
  /** A fault applied to every hub operation while set (see faults.ts), e.g. '503' or 'HANG'. */
  fault: FaultName | undefined
  /** The delay added before every answer from now on (the `latencyMs` option): a hub that slows down mid-run. */
  latencyMs: number
  /** Replaces the static access token (secret rotation). */
  setAccessToken (token: string): void
  /** Every token issued by the login operation stops being accepted. */
  expireTokens (): void
  /** Every refresh token stops being accepted: the next renewal is refused (401). */
  revokeRefreshTokens (): void
  /** Closes the server, destroying open sockets (including hanging ones). */
  close (): Promise<void>
}
