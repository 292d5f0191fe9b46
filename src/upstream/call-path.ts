/**
 * The call path's one shape, as undici's interceptors have one
 * (`dispatch => dispatch`): a policy is a function of the next call that
 * returns a call, and the hub client composes its steps from one ordered
 * list (client.ts), so that their order is data. Each call has one
 * context, made by the client; a step sets the fields it owns (the deadline,
 * the authorization, the attempt, how a body is read) before it calls the
 * next. No step makes an object or a closure per call that the call did not
 * need before: a call costs what its steps do.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { CallResult, Fetched } from './answer.ts'
import type { HubCaller } from './call.ts'
import type { Deadline } from './deadline.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

/** Reads a 2xx answer's body, as it arrived in chunks, into our answer (the decode step's). */
export type ReadAnswer = (
  chunks: readonly Buffer[], size: number, statusCode: number, ctx: CallContext
) => Fetched | Promise<Fetched>

/** One hub call as it goes down the path. */
export interface CallContext {
  readonly op: ResolvedOperation
  readonly caller: HubCaller
  readonly log: FastifyBaseLogger
  /** The hub address with the values placed. */
  readonly path: string
  /** Sent on as `x-request-id`: the caller's id. */
  readonly requestId: string
  /** JSON body of a POST, in the hub's field names. */
  readonly body: unknown
  /** The cache key of a GET lookup ('' for a write). */
  readonly key: string
  /** The caller asked for a fresh answer (`cache-control: no-cache`). */
  readonly fresh: boolean
  /**
   * CallInput.beforeSend (a write's), until the exchange step has awaited it:
   * it runs once per call, not again for a second try with a new token.
   */
  beforeSend: (() => Promise<void>) | undefined
  /** Set by the cache step: how the answer relates to the cache (GET lookups). */
  cache: CallResult['cache']
  /** Set by the deadline step; until then one already passed (a path without one gives up). */
  deadline: Deadline
  /** Set by the credentials step: the hub's authorization ('' for none). */
  authorization: string
  /** Set by the retry step: the attempt's number, from 1. */
  attempt: number
  /** Set by the decode step: how the exchange reads a 2xx body. */
  read: ReadAnswer
}

export type Call = (ctx: CallContext) => Promise<Fetched>

/** A step of the call path: given the call of the steps after it, the call through this one. */
export type Policy = (next: Call) => Call

/** A named entry of the call path's list (the names let a caller of createHubClient edit it). */
export interface CallStep {
  readonly name: string
  readonly policy: Policy
}

/** A deadline already passed: what a call carries until the deadline step sets its own. */
const PASSED: Deadline = {
  at: 0,
  signal: AbortSignal.abort(new DOMException('no deadline', 'TimeoutError'))
}

/** What a call reads a body with until the decode step says how. */
const NO_READER: ReadAnswer = () => {
  throw new Error('the call path has no decode step')
}

/** A call's context as the client makes it, every field in place (one shape for every call). */
export function callContext (
  op: ResolvedOperation, caller: HubCaller, path: string, body: unknown, key: string,
  fresh: boolean, beforeSend?: () => Promise<void>
): CallContext {
  return {
    op,
    caller,
    log: caller.log,
    path,
    requestId: caller.id,
    body,
    key,
    fresh,
    beforeSend,
    cache: undefined,
    deadline: PASSED,
    authorization: '',
    attempt: 1,
    read: NO_READER
  }
}

const NO_EXCHANGE: Call = async () => {
  throw new Error('the call path ends without an exchange')
}

/**
 * The call through `steps`, the first outermost: each step's policy is given
 * the call of the steps after it, once, here. (undici's `compose` reads its
 * list the other way round: its last interceptor is the outermost.)
 */
export function compose (steps: readonly CallStep[]): Call {
  return steps.reduceRight<Call>((next, step) => step.policy(next), NO_EXCHANGE)
}
