/**
 * The hub client: the call path, composed from one ordered list of steps of
 * one shape (call-path.ts), and what the rest of the gateway asks of it.
 */
import type { Clock } from '../clock.ts'
import type { Config } from '../config/load.ts'
import { resolveProfile, type ProfileInForce } from '../profile/resolve.ts'
import type { GatewayState, SharedLookupTier } from '../state/types.ts'
import { resultOf, type CallResult } from './answer.ts'
import type { CallInput, HubCaller, HubCredentials } from './call.ts'
import { callContext, compose, type CallContext, type CallStep } from './call-path.ts'
import { createDecoder, decodePolicy, LARGE_ANSWER_BYTES } from './decode.ts'
import { createDriftReporter } from './drift.ts'
import type { OperationId } from '../catalogue/operations.ts'
import { outcomePolicy, type ObserveCall } from './outcomes.ts'
import { createBreakers, type Circuit } from './policies/breaker.ts'
import { createCachePolicy } from './policies/cache.ts'
import { callerSharePolicy } from './policies/caller-share.ts'
import { credentialsPolicy } from './policies/credentials.ts'
import { deadlinePolicy } from './policies/deadline.ts'
import { retryPolicy } from './policies/retry.ts'
import { buildPath, resolveOperations, type OperationMap } from './resolve-operations.ts'
import { attemptSpanPolicy, callSpanPolicy } from './spans.ts'
import { createTransport, exchangePolicy } from './transport.ts'

export type { CallResult } from './answer.ts'
export type { CallInput, HubCaller, HubCredentials } from './call.ts'
export type { CallContext, CallStep, Policy } from './call-path.ts'
export type { Circuit } from './policies/breaker.ts'

export interface HubClient {
  operations: OperationMap
  /** The hub profile in force (docs/hub.md#hub-profiles): how each operation is sent and read. */
  profile: ProfileInForce
  call (caller: HubCaller, input: CallInput): Promise<CallResult>
  /** The state of every circuit: one per upstream and operation (a gauge can read them). */
  circuits (): Circuit[]
  /** What the lookup cache holds in this process: entries, bytes charged, failures remembered. */
  cacheUsage (): { entries: number, bytes: number, failures: number }
  close (): Promise<void>
}

export type HubClientConfig = Config &
  { UPSTREAM_HUB_URL: string, UPSTREAM_BASE_URL: string, UPSTREAM_API_KEY: string }

export interface HubClientOptions {
  config: HubClientConfig
  credentials: HubCredentials
  userAgent: string
  /** Called once per call with its outcome and duration, for metrics. */
  observe?: ObserveCall
  /** Called when the reference path reads a 2xx answer (the transcoder gave up, or has none). */
  onSlowPath?: (operation: OperationId) => void
  /**
   * Called for each tolerance a hub answer needed (mapping/drift.ts), by
   * operation and kind, for metrics; the first of each is logged.
   */
  onDrift?: (operation: string, kind: string) => void
  /** The hub profile in force; resolved from `config` when not given. */
  profile?: ProfileInForce
  /** Makes the lookup cache's memory in this process (GatewayState.lookupStore, createState). */
  lookupStore: GatewayState['lookupStore']
  /** The lookup cache's tier shared by the replicas; none (undefined) for a single instance. */
  lookupTier?: SharedLookupTier
  /** What the cache's TTLs are measured by (default: the system clock). */
  clock?: Clock
  /**
   * The call path to compose, given the default one's steps (outermost
   * first, as createHubClient lists them): to add a policy of one's own,
   * take one out, or put another in its place, by name. Default: the steps
   * as they are. `npm run bench -- --stages` measures each step so.
   */
  callPath?: (steps: readonly CallStep[]) => readonly CallStep[]
}

/** What the policies are given, read from the settings and the profile in this one place. */
export function policyOptions (config: HubClientConfig, profile: ProfileInForce) {
  return {
    callsPerClient: config.UPSTREAM_MAX_CALLS_PER_CLIENT,
    deadlineMs: config.UPSTREAM_DEADLINE_MS,
    breaker: {
      errorThresholdPercentage: profile.breaker.errorPercentage,
      volumeThreshold: profile.breaker.volumeThreshold,
      rollingCountTimeout: profile.breaker.windowMs,
      resetTimeout: profile.breaker.resetMs
    },
    retry: {
      retries: profile.retries.count,
      baseMs: profile.retries.baseMs,
      maxMs: profile.retries.maxMs
    }
  }
}

export function createHubClient (options: HubClientOptions): HubClient {
  const { config, credentials, userAgent, lookupStore, lookupTier, clock } = options
  const callPath = options.callPath ?? (steps => steps)
  const profile = options.profile ?? resolveProfile(config)
  const operations = resolveOperations(config, profile)
  const drift = createDriftReporter(options.onDrift)
  const given = policyOptions(config, profile)
  const cache = createCachePolicy({ config, credentials, lookupStore, tier: lookupTier, clock })
  const breakers = createBreakers(operations, given.breaker)
  const budgetFromBytes = LARGE_ANSWER_BYTES
  const transport = createTransport({ config, profile, userAgent, budgetFromBytes, drift })
  const decoder = createDecoder({
    operations, config, timeZone: profile.timeZone, onSlowPath: options.onSlowPath, drift
  })
  // Each operation's address without its values, for the spans of its calls.
  const templates = new Map([...operations.values()]
    .map(op => [op.id, transport.basePath(op.service) + op.address]))
  // A write, or a lookup the cache would not answer, starts a hub call of its own.
  const startsCall = ({ op, key, fresh }: CallContext): boolean =>
    op.method !== 'GET' || cache.wouldCall(key, fresh)

  // The call path, in the order a call meets its steps: each a function of the next.
  const hubCall = compose(callPath([
    { name: 'caller-share', policy: callerSharePolicy(given.callsPerClient, startsCall) },
    { name: 'outcome', policy: outcomePolicy(options.observe) },
    { name: 'call-span', policy: callSpanPolicy(breakers.state) },
    { name: 'cache', policy: cache.policy },
    { name: 'deadline', policy: deadlinePolicy(given.deadlineMs) },
    { name: 'credentials', policy: credentialsPolicy(credentials) },
    { name: 'breaker', policy: breakers.policy },
    { name: 'retry', policy: retryPolicy(given.retry) },
    { name: 'attempt-span', policy: attemptSpanPolicy(op => templates.get(op.id) ?? '') },
    { name: 'decode', policy: decodePolicy(decoder, config.UPSTREAM_API_KEY) },
    { name: 'exchange', policy: exchangePolicy(transport) }
  ]))

  return {
    operations,
    profile,
    async call (caller, input) {
      const op = operations.get(input.operation)
      if (op === undefined) throw new Error(`unknown operation ${input.operation}`)
      // A value that cannot be placed is the caller's error, not a hub call that failed.
      const path = buildPath(op, input.params ?? {}, transport.basePath(op.service))
      const key = op.method === 'GET' ? cache.key(caller, path) : ''
      const ctx = callContext(
        op, caller, path, input.body, key, input.fresh === true, input.beforeSend)
      return resultOf(await hubCall(ctx), ctx.cache)
    },
    circuits: () => breakers.circuits(),
    cacheUsage: () => cache.usage(),
    async close () {
      cache.close()
      breakers.shutdown()
      await credentials.close()
      await transport.close()
      // After the calls in flight, which may be waiting on a thread.
      await decoder.close()
    }
  }
}
