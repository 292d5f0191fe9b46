import type { IncomingHttpHeaders } from 'node:http'

/** What a credential provider may read of the caller's request. */
export interface Caller { headers: IncomingHttpHeaders }

/**
 * Where the hub's access token comes from (UPSTREAM_CREDENTIALS): a static
 * value or file, the gateway's own login, or the caller's forwarded token.
 */
export interface Credentials {
  readonly mode: 'static' | 'login' | 'forward'
  /** The Authorization value for one call. */
  authorization (caller: Caller | undefined): Promise<string>
  /**
   * Whose data this is: part of every cache key, so that forwarded tokens
   * never share cached answers.
   */
  identity (caller: Caller | undefined): string
  /**
   * The hub refused `used` with a 401: get a new token if there is one.
   * True when a call retried now would carry a different token.
   */
  refresh (used: string): Promise<boolean>
  close (): Promise<void>
}
