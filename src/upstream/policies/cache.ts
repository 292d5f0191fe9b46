/**
 * The lookup cache policy: coalescing of identical concurrent lookups, a TTL
 * per entry, stale-if-error, and a short memory of failures, around a
 * replica's own store (a LookupStore, which the state makes: this process's
 * memory, state/memory/lookup-cache.ts) and, where there is one, a tier
 * shared by the replicas (SharedLookupTier).
 *
 * Written here rather than taken from async-cache-dedupe: that library has no byte budget (its
 * memory store counts entries, and SP2 answers run from 2 KB to 1.4 MB), no stale-if-error (its
 * `stale` is stale-while-revalidate), and cannot tell a caller whether its answer came from the
 * cache, which `meta.cached` and the `age` header need. The store is lru-cache (budget, TTL,
 * clock); its `fetch` de-duplication is not used, for what it cannot say: a `no-cache` caller must
 * not join a call begun for a plain lookup (its `forceRefresh` joins any fetch in flight), a stale
 * answer may stand in for some failures only (its `allowStaleOnFetchRejection` is for all or
 * none), a failure is remembered and answered again without a call, and a joined call is
 * `meta.cached` when it began before the caller.
 */
import { systemClock, type Clock } from '../../clock.ts'
import type { Config } from '../../config/load.ts'
import { codeOf, isGatewayError, remade } from '../../errors.ts'
import type { Caller, HubCredentials } from '../call.ts'
import { envelopeAround } from '../../schemas/envelope.ts'
import type { GatewayState, LookupEntry, LookupStore, SharedLookupTier } from '../../state/types.ts'
import { ANSWER_OVERHEAD_BYTES, own, type Fetched } from '../answer.ts'
import type { Call, CallContext, Policy } from '../call-path.ts'

export interface Lookup<T> {
  entry: LookupEntry<T>
  /** Answered from the cache rather than from a hub call made for this lookup. */
  cached: boolean
  /** Served past its TTL because the hub failed. */
  stale: boolean
}

export interface LoadOptions {
  ttlMs: number
  staleMs: number
  /** The caller asked for a fresh answer (`cache-control: no-cache`). */
  refresh: boolean
  /** Which failures allow a stale answer instead. */
  serveStaleOn: (error: unknown) => boolean
}

/** What a loader found. */
export interface Loaded<T> {
  value: T
  /** The value's size in bytes. */
  bytes: number
  /** When the hub answered (ms); by default, when the loader resolved. */
  fetchedAt?: number
  /**
   * Found in the shared tier rather than asked of the hub: kept until its own times, and answered
   * as cached.
   */
  shared?: { expiresAt: number, staleUntil: number }
}

export interface LookupCacheOptions<T> {
  /** Where the entries are kept (GatewayState.lookupStore makes one). */
  store: LookupStore<T>
  /**
   * How long a lookup the hub just failed answers that failure again without a hub call (ms); 0:
   * never.
   */
  failureMs: number
  /** Which failures are remembered so. */
  remember: (error: unknown) => boolean
  /**
   * The error answered for a remembered failure, given the time until the
   * hub is asked again and the failure's age (ms): the policy's adds
   * `retry-after`. Also what the failing call itself answers once
   * remembered. Default: the failure as it was.
   */
  replay?: (error: unknown, retryInMs: number, ageMs: number) => unknown
  /** How often remembered failures past their time are swept out (ms). */
  sweepMs?: number
  clock?: Clock
}

export interface LookupCache<T> {
  load (key: string, options: LoadOptions, loader: () => Promise<Loaded<T>>): Promise<Lookup<T>>
  /**
   * Whether a lookup would start a hub call of its own: not when a fresh
   * entry answers it, a remembered failure does, or it would join a call in
   * flight.
   */
  wouldCall (key: string, refresh: boolean): boolean
  readonly size: number
  readonly bytes: number
  /** Failures remembered (see LookupCacheOptions.failureMs). */
  readonly failures: number
  clear (): void
  /** Stops the sweeps. */
  close (): void
}

/**
 * Remembered failures at most: a caller varying a failing lookup cannot grow them without bound.
 */
export const MAX_REMEMBERED_FAILURES = 1000

const SWEEP_MS = 10_000

interface Failure { error: unknown, at: number, until: number }
interface Settled<T> { entry: LookupEntry<T>, shared: boolean }

export function createLookupCache<T> (options: LookupCacheOptions<T>): LookupCache<T> {
  const { store, failureMs, remember, clock = systemClock, sweepMs = SWEEP_MS } = options
  const replay = options.replay ?? ((error: unknown) => error)
  const failures = new Map<string, Failure>()
  // Calls in flight: any (a plain lookup joins the newest), and those begun by a caller asking
  // afresh.
  const inflight = new Map<string, Promise<Settled<T>>>()
  const inflightFresh = new Map<string, Promise<Settled<T>>>()

  /** Remembers a failure (when it is one to remember); what its callers are answered. */
  function fail (key: string, error: unknown): unknown {
    if (failureMs <= 0 || !remember(error)) return error
    failures.delete(key)
    const at = clock()
    failures.set(key, { error, at, until: at + failureMs })
    if (failures.size > MAX_REMEMBERED_FAILURES) {
      const oldest = failures.keys().next().value
      if (oldest !== undefined) failures.delete(oldest)
    }
    return replay(error, failureMs, 0)
  }

  // Failures past their time; otherwise only a lookup of the same key would drop them.
  const sweeper = setInterval(() => {
    const now = clock()
    for (const [key, failure] of failures) if (now >= failure.until) failures.delete(key)
  }, sweepMs)
  sweeper.unref()

  function join (
    key: string,
    promise: Promise<Settled<T>>,
    map: Map<string, Promise<Settled<T>>>
  ): void {
    map.set(key, promise)
    const done = (): void => {
      if (map.get(key) === promise) map.delete(key)
    }
    promise.then(done, done)
  }

  /** The last answer, past its TTL but within its stale time, or else the failure. */
  function fallback (key: string, error: unknown): Lookup<T> {
    const stale = store.peek(key)
    if (stale !== undefined && clock() < stale.staleUntil) {
      return { entry: stale, cached: true, stale: true }
    }
    throw error
  }

  return {
    async load (key, load, loader) {
      const now = clock()
      const known = store.peek(key)
      if (known !== undefined && now >= known.staleUntil) store.delete(key)
      else if (known !== undefined && !load.refresh && now < known.expiresAt) {
        store.get(key)
        return { entry: known, cached: true, stale: false }
      }

      // The hub just failed this lookup: the same failure (or a stale answer), without asking
      // again.
      const failed = failures.get(key)
      if (failed !== undefined) {
        if (now < failed.until) {
          const error = replay(failed.error, failed.until - now, now - failed.at)
          if (load.serveStaleOn(failed.error)) return fallback(key, error)
          throw error
        }
        failures.delete(key)
      }

      // A caller asking afresh joins only a call begun afresh too; others join any.
      let pending = load.refresh ? inflightFresh.get(key) : inflight.get(key)
      const joined = pending !== undefined
      if (pending === undefined) {
        pending = loader().then(({ value, bytes, fetchedAt = clock(), shared }) => {
          const entry: LookupEntry<T> = {
            value,
            bytes,
            fetchedAt,
            expiresAt: shared?.expiresAt ?? fetchedAt + load.ttlMs,
            staleUntil: shared?.staleUntil ?? fetchedAt + Math.max(load.ttlMs, load.staleMs)
          }
          failures.delete(key)
          store.set(key, entry)
          return { entry, shared: shared !== undefined }
        }, (error: unknown) => {
          throw fail(key, error)
        })
        join(key, pending, inflight)
        if (load.refresh) join(key, pending, inflightFresh)
      }
      try {
        const { entry, shared } = await pending
        return { entry, cached: shared || (joined && entry.fetchedAt < now), stale: false }
      } catch (error) {
        if (load.serveStaleOn(error)) return fallback(key, error)
        throw error
      }
    },
    wouldCall (key, refresh) {
      const now = clock()
      const entry = store.peek(key)
      if (!refresh && entry !== undefined && now < entry.expiresAt) return false
      const failed = failures.get(key)
      if (failed !== undefined && now < failed.until) return false
      return !(refresh ? inflightFresh : inflight).has(key)
    },
    get size () { return store.size },
    get bytes () { return store.bytes },
    get failures () { return failures.size },
    clear () {
      store.clear()
      failures.clear()
    },
    close () {
      clearInterval(sweeper)
      store.close()
    }
  }
}

/**
 * Failures the cache remembers for a moment (CACHE_FAILURE_SECONDS): the hub
 * unavailable, too slow or unreadable, as a hub call found it; not an open
 * circuit (no hub call was made, and its retry-after changes), nor the hub
 * refusing the request (4xx).
 */
function isHubTrouble (error: unknown): boolean {
  return (
    isGatewayError(error, 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'UPSTREAM_BAD_RESPONSE') &&
    codeOf(error.cause) !== 'EOPENBREAKER'
  )
}

/**
 * A remembered failure as it is answered (docs/api.md#the-envelope-and-errors: every 503 says
 * when to come back): with `retry-after`, the seconds until the gateway asks
 * the hub again, or what is left of the hub's own `retry-after` if that is
 * longer. A new error (its cause the remembered failure, which is answered
 * again later).
 */
export function withRetryAfter (error: unknown, retryInMs: number, ageMs: number): unknown {
  if (!isGatewayError(error)) return error
  const hub = Number(error.retryAfter)
  const fromHub = Number.isFinite(hub) ? Math.ceil(hub - ageMs / 1000) : 0
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000), fromHub)
  return remade(error, { retryAfter: String(seconds) })
}

/** Failures a stale answer may stand in for. */
function isHubDown (error: unknown): boolean {
  return isGatewayError(error, 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT')
}

/**
 * A ceiling on the entries the store keeps whatever their size. CACHE_MAX_BYTES
 * charges each entry its bookkeeping (about 850 bytes an empty answer), so
 * it binds first below 800 MB; this only keeps a huge budget from growing
 * the store's maps without end.
 */
const MAX_ENTRIES = 1_000_000

export interface CachePolicyOptions {
  config: Pick<Config, 'CACHE_MAX_BYTES' | 'CACHE_FAILURE_SECONDS' | 'CACHE_STALE_IF_ERROR_SECONDS'>
  credentials: Pick<HubCredentials, 'identity'>
  /** Makes this replica's memory of lookups (GatewayState.lookupStore). */
  lookupStore: GatewayState['lookupStore']
  /** The tier the replicas share, behind this one's memory; none for a single instance. */
  tier?: SharedLookupTier | undefined
  clock?: Clock | undefined
}

export interface CachePolicy {
  /**
   * The cache key of a lookup: whose data it is, so forwarded tokens never share answers, and the
   * hub address.
   */
  key (caller: Caller, path: string): string
  /** See LookupCache.wouldCall. */
  wouldCall (key: string, fresh: boolean): boolean
  /**
   * The cache step: a GET lookup's answer from the cache, from a call in
   * flight, or from the call below (one hub call), with how it relates to
   * the cache set on the context; a write goes down as it is.
   */
  policy: Policy
  /** What the memory holds: entries, the bytes charged for them, failures remembered. */
  usage (): { entries: number, bytes: number, failures: number }
  close (): void
}

/**
 * A shared tier's entry as an answer of this replica's, framed in the envelope its first use sends
 * (cached).
 */
function fetchedOfShared (entry: {
  json: Buffer
  count: number | undefined
  upstreamStatus: number
}): Fetched {
  const { body, json } = envelopeAround(entry.json, {
    count: entry.count,
    cached: true,
    stale: false
  })
  const fetched: Fetched = {
    json,
    count: entry.count,
    upstreamStatus: entry.upstreamStatus,
    body,
    cached: true
  }
  own(fetched)
  return fetched
}

export function createCachePolicy (options: CachePolicyOptions): CachePolicy {
  const { config, credentials, tier, clock = systemClock } = options
  const budget = { maxBytes: config.CACHE_MAX_BYTES, maxEntries: MAX_ENTRIES }
  const cache = createLookupCache<Fetched>({
    store: options.lookupStore<Fetched>(budget),
    failureMs: config.CACHE_FAILURE_SECONDS * 1000,
    remember: isHubTrouble,
    replay: withRetryAfter,
    clock
  })
  const staleMs = config.CACHE_STALE_IF_ERROR_SECONDS * 1000

  /** A fresh answer another replica fetched, or undefined. */
  async function fromTier (key: string): Promise<Loaded<Fetched> | undefined> {
    const entry = await tier?.get(key).catch(() => undefined)
    if (entry === undefined || clock() >= entry.expiresAt) return undefined
    const value = fetchedOfShared(entry)
    return {
      value,
      bytes: value.body.length + ANSWER_OVERHEAD_BYTES,
      fetchedAt: entry.fetchedAt,
      shared: { expiresAt: entry.expiresAt, staleUntil: entry.staleUntil }
    }
  }

  async function lookup (next: Call, ctx: CallContext): Promise<Fetched> {
    const { op, key, fresh } = ctx
    const ttlMs = op.cacheTtlSeconds * 1000
    const keeps = ttlMs > 0 || staleMs > 0
    const options = { ttlMs, staleMs, refresh: fresh, serveStaleOn: isHubDown }
    const lookup = await cache.load(key, options, async () => {
      const shared = tier !== undefined && ttlMs > 0 && !fresh ? await fromTier(key) : undefined
      if (shared !== undefined) return shared
      const fetched = await next(ctx)
      const fetchedAt = clock()
      if (keeps) {
        // Only an answer the cache keeps needs memory of its own.
        own(fetched)
        // Best effort, not waited for: the answer does not depend on it.
        const { json, count, upstreamStatus } = fetched
        const staleUntil = fetchedAt + Math.max(ttlMs, staleMs)
        const expiresAt = fetchedAt + ttlMs
        tier?.set(key, { json, count, upstreamStatus, fetchedAt, expiresAt, staleUntil })
          .catch(() => {})
      }
      return { value: fetched, bytes: fetched.body.length + ANSWER_OVERHEAD_BYTES, fetchedAt }
    })
    const { value, fetchedAt } = lookup.entry
    const age = (clock() - fetchedAt) / 1000
    if (lookup.stale) {
      const ageSeconds = Math.round(age)
      ctx.log.warn({ operation: op.id, ageSeconds }, 'hub failed: serving a stale answer')
    }
    const { cached, stale } = lookup
    ctx.cache = { cached, stale, ageSeconds: Math.floor(age), ttlSeconds: op.cacheTtlSeconds }
    return value
  }

  return {
    key: (caller, path) => `${credentials.identity(caller)} ${path}`,
    wouldCall: (key, fresh) => cache.wouldCall(key, fresh),
    policy: (next) => (ctx) => ctx.op.method === 'GET' ? lookup(next, ctx) : next(ctx),
    usage: () => ({ entries: cache.size, bytes: cache.bytes, failures: cache.failures }),
    close: () => cache.close()
  }
}
