/**
 * The lookup cache: coalescing of identical concurrent lookups, a TTL per
 * entry, stale-if-error, a short memory of failures, and a budget that holds
 * what the entries really cost (their answers, their keys and the
 * bookkeeping around them), with a cap on their number.
 *
 * Written here rather than taken from async-cache-dedupe (which the issue
 * names): that library has no byte budget (its memory store counts entries,
 * and SP2 answers run from 2 KB to 1.4 MB), no stale-if-error (its `stale` is
 * stale-while-revalidate), and cannot tell a caller whether its answer came
 * from the cache, which `meta.cached` and the `age` header need.
 */

export interface CacheEntry<T> {
  value: T
  /** Size charged against the budget: the value's, the key's and the entry's own. */
  bytes: number
  /** When the hub answered (ms). */
  fetchedAt: number
  /** Fresh until (ms). */
  expiresAt: number
  /** May be served on a hub failure until (ms); swept out after. */
  staleUntil: number
}

export interface Lookup<T> {
  entry: CacheEntry<T>
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

export interface LookupCacheOptions {
  /** Budget of the entries, in bytes of memory (see ENTRY_OVERHEAD_BYTES). */
  maxBytes: number
  /** Entries kept at most. */
  maxEntries: number
  /** How long a lookup the hub just failed answers that failure again without a hub call (ms); 0: never. */
  failureMs: number
  /** Which failures are remembered so. */
  remember: (error: unknown) => boolean
  /** How often entries past their stale time, and remembered failures past theirs, are swept out (ms). */
  sweepMs?: number
}

export interface LookupCache<T> {
  load (key: string, options: LoadOptions, loader: () => Promise<{ value: T, bytes: number }>): Promise<Lookup<T>>
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
  /** Stops the sweep. */
  close (): void
}

/**
 * What one entry costs beyond its value and its key: the Map's slot and the
 * entry record, 141 bytes of heap (measured with --expose-gc, a full GC
 * before and after 100,000 entries; docs/resilience.md), rounded up.
 */
export const ENTRY_OVERHEAD_BYTES = 160

/** A key in the heap: two bytes a character at most (V8 keeps ASCII in one, but a key may hold more). */
export function keyBytes (key: string): number {
  return 2 * key.length
}

/** Remembered failures at most: a caller varying a failing lookup cannot grow them without bound. */
export const MAX_REMEMBERED_FAILURES = 1000

const SWEEP_MS = 10_000

interface Failure { error: unknown, until: number }

export function createLookupCache<T> (options: LookupCacheOptions): LookupCache<T> {
  const { maxBytes, maxEntries, failureMs, remember } = options
  // A Map iterates in insertion order: re-inserting on use makes it an LRU.
  const entries = new Map<string, CacheEntry<T>>()
  const failures = new Map<string, Failure>()
  // Calls in flight: any (a plain lookup joins the newest), and those begun by a caller asking afresh.
  const inflight = new Map<string, Promise<CacheEntry<T>>>()
  const inflightFresh = new Map<string, Promise<CacheEntry<T>>>()
  let bytes = 0

  function remove (key: string): void {
    const entry = entries.get(key)
    if (entry === undefined) return
    entries.delete(key)
    bytes -= entry.bytes
  }

  function store (key: string, entry: CacheEntry<T>): void {
    remove(key)
    if (entry.bytes > maxBytes || entry.staleUntil <= entry.fetchedAt) return
    entries.set(key, entry)
    bytes += entry.bytes
    for (const [oldest, old] of entries) {
      if (bytes <= maxBytes && entries.size <= maxEntries) break
      entries.delete(oldest)
      bytes -= old.bytes
    }
  }

  function fail (key: string, error: unknown): void {
    if (failureMs <= 0 || !remember(error)) return
    failures.delete(key)
    failures.set(key, { error, until: Date.now() + failureMs })
    if (failures.size > MAX_REMEMBERED_FAILURES) {
      const oldest = failures.keys().next().value
      if (oldest !== undefined) failures.delete(oldest)
    }
  }

  /** Entries past their stale time and failures past theirs; otherwise only a lookup of the same key would drop them. */
  function sweep (): void {
    const now = Date.now()
    for (const [key, entry] of entries) if (now >= entry.staleUntil) remove(key)
    for (const [key, failure] of failures) if (now >= failure.until) failures.delete(key)
  }
  const sweeper = setInterval(sweep, options.sweepMs ?? SWEEP_MS)
  sweeper.unref()

  function join (key: string, promise: Promise<CacheEntry<T>>, map: Map<string, Promise<CacheEntry<T>>>): void {
    map.set(key, promise)
    const done = (): void => { if (map.get(key) === promise) map.delete(key) }
    promise.then(done, done)
  }

  /** The last answer, past its TTL but within its stale time, or else the failure. */
  function fallback (key: string, error: unknown): Lookup<T> {
    const stale = entries.get(key)
    if (stale !== undefined && Date.now() < stale.staleUntil) return { entry: stale, cached: true, stale: true }
    throw error
  }

  return {
    async load (key, load, loader) {
      const now = Date.now()
      const known = entries.get(key)
      if (known !== undefined && now >= known.staleUntil) remove(key)
      else if (known !== undefined && !load.refresh && now < known.expiresAt) {
        entries.delete(key)
        entries.set(key, known)
        return { entry: known, cached: true, stale: false }
      }

      // The hub just failed this lookup: the same failure (or a stale answer), without asking again.
      const failed = failures.get(key)
      if (failed !== undefined) {
        if (now < failed.until) {
          if (load.serveStaleOn(failed.error)) return fallback(key, failed.error)
          throw failed.error
        }
        failures.delete(key)
      }

      // A caller asking afresh joins only a call begun afresh too; others join any.
      let pending = load.refresh ? inflightFresh.get(key) : inflight.get(key)
      const joined = pending !== undefined
      if (pending === undefined) {
        pending = loader().then(({ value, bytes: size }) => {
          const fetchedAt = Date.now()
          const entry: CacheEntry<T> = {
            value,
            bytes: size + keyBytes(key) + ENTRY_OVERHEAD_BYTES,
            fetchedAt,
            expiresAt: fetchedAt + load.ttlMs,
            staleUntil: fetchedAt + Math.max(load.ttlMs, load.staleMs)
          }
          failures.delete(key)
          store(key, entry)
          return entry
        }, (error: unknown) => {
          fail(key, error)
          throw error
        })
        join(key, pending, inflight)
        if (load.refresh) join(key, pending, inflightFresh)
      }
      try {
        const entry = await pending
        return { entry, cached: joined && entry.fetchedAt < now, stale: false }
      } catch (error) {
        if (load.serveStaleOn(error)) return fallback(key, error)
        throw error
      }
    },
    wouldCall (key, refresh) {
      const now = Date.now()
      const entry = entries.get(key)
      if (!refresh && entry !== undefined && now < entry.expiresAt) return false
      const failed = failures.get(key)
      if (failed !== undefined && now < failed.until) return false
      return !(refresh ? inflightFresh : inflight).has(key)
    },
    get size () { return entries.size },
    get bytes () { return bytes },
    get failures () { return failures.size },
    clear () {
      entries.clear()
      failures.clear()
      bytes = 0
    },
    close () {
      clearInterval(sweeper)
    }
  }
}
