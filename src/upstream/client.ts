/**
 * The hub client: composes the call path, its layers in the order a call
 * meets them. From the outside in:
 *
 *   caller's share (policies/caller-share.ts)  one caller cannot take every connection
 *   cache (policies/cache.ts)                  GET lookups: memory, shared tier, coalescing, stale-if-error
 *   deadline (policies/deadline.ts)            UPSTREAM_DEADLINE_MS for the whole hub call
 *   credentials (policies/credentials.ts)      the hub's token; a 401 gets one new one
 *   breaker (policies/breaker.ts)              one circuit per upstream and operation
 *   retry (policies/retry.ts)                  GET lookups, within the deadline; a span per attempt
 *   transport (transport.ts)                   pool, send, read under the budget, failure mapping
 *   decoder (decode.ts)                        transcoder fast path, threads, reference path
 */
import type { Clock } from '../clock.ts'
import type { Config } from '../config/load.ts'
import { upstreamStatusOf } from '../errors.ts'
import { resolveProfile, type ProfileInForce } from '../profile/resolve.ts'
import type { SharedLookupTier } from '../state/types.ts'
import { resultOf, type CallResult, type Fetched } from './answer.ts'
import type { CallInput, HubCaller, HubCredentials } from './call.ts'
import { createDecoder, LARGE_ANSWER_BYTES } from './decode.ts'
import { createDriftReporter } from './drift.ts'
import { outcomeOf, type Outcome } from './failures.ts'
import type { OperationId } from '../catalogue/operations.ts'
import { createBreakers, type Circuit } from './policies/breaker.ts'
import { createCachePolicy } from './policies/cache.ts'
import { createCallerShare } from './policies/caller-share.ts'
import { withAuthorization } from './policies/credentials.ts'
import { startDeadline } from './policies/deadline.ts'
import { withRetries } from './policies/retry.ts'
import { buildPath, resolveOperations, type OperationMap, type ResolvedOperation } from './resolve-operations.ts'
import { inAttemptSpan, inCallSpan } from './spans.ts'
import { createTransport } from './transport.ts'

export type { CallResult } from './answer.ts'
export type { CallInput, HubCaller, HubCredentials } from './call.ts'
export type { Circuit } from './policies/breaker.ts'

export interface HubClient {
  operations: OperationMap
  /** The hub profile in force (docs/profiles.md): how each operation is addressed, authenticated and read. */
  profile: ProfileInForce
  call (caller: HubCaller, input: CallInput): Promise<CallResult>
  /** The state of every circuit: one per upstream and operation (a gauge can read them). */
  circuits (): Circuit[]
  /** What the lookup cache holds in this process: entries, the bytes charged for them, failures remembered. */
  cacheUsage (): { entries: number, bytes: number, failures: number }
  close (): Promise<void>
}

export interface HubClientOptions {
  config: Config & { UPSTREAM_HUB_URL: string, UPSTREAM_BASE_URL: string, UPSTREAM_API_KEY: string }
  credentials: HubCredentials
  userAgent: string
  /** Called once per call with its outcome and duration, for metrics. */
  observe?: (operation: OperationId, outcome: Outcome, seconds: number) => void
  /** Called when a 2xx answer is read by the reference path (the transcoder gave up, or there is none). */
  onSlowPath?: (operation: OperationId) => void
  /** Called for each tolerance a hub answer needed (mapping/drift.ts), by operation and kind, for metrics; the first of each is logged. */
  onDrift?: (operation: string, kind: string) => void
  /** The hub profile in force; resolved from `config` when not given. */
  profile?: ProfileInForce
  /** The lookup cache's tier shared by the replicas; none (undefined) for a single instance. */
  lookupTier?: SharedLookupTier
  /** What the cache's TTLs are measured by (default: the system clock). */
  clock?: Clock
}

/** What a call's span records of its answer. */
function describeCall ({ cache }: CallResult): Record<string, string> {
  return cache === undefined ? {} : { 'gateway.hub.cache': cache.stale ? 'stale' : cache.cached ? 'hit' : 'miss' }
}

export function createHubClient ({ config, credentials, userAgent, observe, onSlowPath, onDrift, lookupTier, clock, profile = resolveProfile(config) }: HubClientOptions): HubClient {
  const operations = resolveOperations(config, profile)
  const drift = createDriftReporter(onDrift)
  const share = createCallerShare(config.UPSTREAM_MAX_CALLS_PER_CLIENT)
  const cache = createCachePolicy({ config, credentials, tier: lookupTier, clock })
  const breakers = createBreakers(operations, {
    errorThresholdPercentage: profile.breaker.errorPercentage,
    volumeThreshold: profile.breaker.volumeThreshold,
    rollingCountTimeout: profile.breaker.windowMs,
    resetTimeout: profile.breaker.resetMs
  })
  const { count, baseMs, maxMs } = profile.retries
  const retries = { retries: count, baseMs, maxMs }
  const budgetFromBytes = LARGE_ANSWER_BYTES
  const transport = createTransport({ config, profile, userAgent, budgetFromBytes })
  const { timeZone } = profile
  const decoder = createDecoder({ operations, config, timeZone, onSlowPath, drift })
  // Each operation's address without its values, for the spans of its calls.
  const templates = new Map([...operations.values()].map(op => [op.id, transport.basePath(op.service) + op.address]))

  /** One hub call: the layers below the cache, outermost first. */
  function fetch (op: ResolvedOperation, caller: HubCaller, input: CallInput, path: string): Promise<Fetched> {
    const deadline = startDeadline(config.UPSTREAM_DEADLINE_MS)
    const { log } = caller
    return withAuthorization(credentials, op, caller, log, (authorization) =>
      breakers.run(op, () =>
        withRetries(retries, op, deadline, log, (attempt) => inAttemptSpan(op, attempt, templates.get(op.id)!, () =>
          transport.exchange(op, { path, requestId: caller.id, authorization, body: input.body, deadline, noteDrift: (bit, details) => drift.report(op.id, bit, log, details) }, (chunks, size, status) =>
            decoder.decode(op, chunks, size, status, deadline, log, [config.UPSTREAM_API_KEY, authorization]))))))
  }

  return {
    operations,
    profile,
    async call (caller, input) {
      const op = operations.get(input.operation)
      if (op === undefined) throw new Error(`unknown operation ${input.operation}`)
      const { log } = caller
      const fresh = input.fresh === true
      // A value that cannot be placed is the caller's error, not a hub call that failed.
      const path = buildPath(op, input.params ?? {}, transport.basePath(op.service))
      const key = op.method === 'GET' ? cache.key(caller, path) : ''
      const release = share.admit(op, caller, log, () => op.method !== 'GET' || cache.wouldCall(key, fresh))
      const started = process.hrtime.bigint()
      try {
        // The call's span (spans.ts): a no-op that records nothing while tracing is off.
        const result = await inCallSpan(op, breakers.state(op), () => op.method === 'GET'
          ? cache.lookup(op, key, fresh, log, () => fetch(op, caller, input, path))
          : fetch(op, caller, input, path).then(fetched => resultOf(fetched)), describeCall)
        caller.upstreamStatus = result.upstreamStatus
        observe?.(op.id, result.cache?.cached === true ? (result.cache.stale ? 'stale' : 'cached') : 'ok', Number(process.hrtime.bigint() - started) / 1e9)
        return result
      } catch (error) {
        const outcome = outcomeOf(error)
        const status = upstreamStatusOf(error)
        if (status !== undefined) caller.upstreamStatus = status
        observe?.(op.id, outcome, Number(process.hrtime.bigint() - started) / 1e9)
        log.warn({ operation: op.id, outcome, err: (error instanceof Error ? error.cause : undefined) ?? error }, 'upstream call failed')
        throw error
      } finally {
        release()
      }
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
