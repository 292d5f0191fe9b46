/** What a route asks of the hub client (see client.ts). */
import type { FastifyBaseLogger } from 'fastify'
import type { Caller } from '../credentials/index.ts'
import type { OperationId } from './operations.ts'

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
}
