/** What a route asks of the hub client (see client.ts), and what the client needs of the hub's credentials. */
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { OperationId } from '../catalogue/operations.ts'

/** What a credential source may read of the caller's request (forward mode: its token). */
export interface Caller { readonly headers: IncomingHttpHeaders }

/**
 * The hub's access token as the hub client uses it. credentials/ provides
 * it (static, login or forward, UPSTREAM_CREDENTIALS); the client is given
 * one and never imports how it is made, so that the arrows between the two
 * folders point one way.
 */
export interface HubCredentials {
  /** The Authorization value for one call. */
  authorization (caller: Caller | undefined): Promise<string>
  /** Whose data this is: part of every cache key, so that forwarded tokens never share cached answers. */
  identity (caller: Caller | undefined): string
  /** The hub refused `used` with a 401: true when a call retried now would carry a different token. */
  refresh (used: string): Promise<boolean>
  close (): Promise<void>
}

/**
 * What the hub client reads of the caller's request (a FastifyRequest is
 * one): its id (sent on as `x-request-id`) and logger; the hub's status is
 * noted on it; forward mode reads its token; its client (or, without
 * authentication, its address) is who the bound on hub calls in flight counts.
 */
export interface HubCaller extends Caller {
  readonly id: string
  readonly log: FastifyBaseLogger
  upstreamStatus?: number
  readonly client?: { name: string } | null
  readonly ip?: string
}

/** One call a route asks of the hub. */
export interface CallInput {
  operation: OperationId
  /** Validated gateway parameter values, by gateway name. */
  params?: Readonly<Record<string, string>>
  /** JSON body for POST operations, already in the hub's field names. */
  body?: unknown
  /** The caller sent `cache-control: no-cache`: ask the hub afresh. */
  fresh?: boolean
  /**
   * Awaited once, the last thing before the request goes to the hub (after the
   * caller's share, the credentials and the circuit): a write marks its key
   * sending here, so that a crash before that point leaves the key free, not
   * unknown. When it rejects, nothing is sent and the call fails with its error.
   */
  beforeSend?: () => Promise<void>
}
