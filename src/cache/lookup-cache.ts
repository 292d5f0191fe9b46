/**
 * The lookup cache: coalescing of identical concurrent lookups, a TTL per
 * entry, stale-if-error, and a memory budget counted in upstream body bytes.
 *
 * Written here rather than taken from async-cache-dedupe (which the issue
 * names): that library has no byte budget (its memory store counts entries,
 * and SP2 answers run from 2 KB to 1.4 MB), no stale-if-error (its `stale` is
 * stale-while-revalidate), and cannot tell a caller whether its answer came
 * from the cache, which `meta.cached` and the `age` header need.
 */

export interface CacheEntry<T> {
  value: T
  /** Size charged against the budget. */
  bytes: number
  /** When the hub answered (ms). */
  fetchedAt: number
  /** Fresh until (ms). */
  expiresAt: number
  /** May be served on a hub failure until (ms). */
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

export interface LookupCache<T> {
  load (key: string, options: LoadOptions, loader: () => Promise<{ value: T, bytes: number }>): Promise<Lookup<T>>
  readonly size: number
  readonly bytes: number
  clear (): void
}

export function createLookupCache<T> (maxBytes: number): LookupCache<T> {
  // A Map iterates in insertion order: re-inserting on use makes it an LRU.
  const entries = new Map<string, CacheEntry<T>>()
  const inflight = new Map<string, Promise<CacheEntry<T>>>()
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
      if (bytes <= maxBytes) break
      entries.delete(oldest)
      bytes -= old.bytes
    }
  }

  return {
    async load (key, options, loader) {
      const now = Date.now()
      const known = entries.get(key)
      if (known !== undefined && now >= known.staleUntil) remove(key)
      else if (known !== undefined && !options.refresh && now < known.expiresAt) {
        entries.delete(key)
        entries.set(key, known)
        return { entry: known, cached: true, stale: false }
      }

      // A caller asking afresh gets a hub call of its own, not one begun before it asked.
      let pending = options.refresh ? undefined : inflight.get(key)
      const joined = pending !== undefined
      if (pending === undefined) {
        pending = loader().then(({ value, bytes: size }) => {
          const fetchedAt = Date.now()
          const entry: CacheEntry<T> = {
            value,
            bytes: size,
            fetchedAt,
            expiresAt: fetchedAt + options.ttlMs,
            staleUntil: fetchedAt + Math.max(options.ttlMs, options.staleMs)
          }
          store(key, entry)
          return entry
        })
        if (!options.refresh) {
          inflight.set(key, pending)
          const settled = pending
          settled.then(() => inflight.delete(key), () => inflight.delete(key))
        }
      }
      try {
        const entry = await pending
        return { entry, cached: joined && entry.fetchedAt < now, stale: false }
      } catch (error) {
        const fallback = entries.get(key)
        if (fallback !== undefined && Date.now() < fallback.staleUntil && options.serveStaleOn(error)) {
          return { entry: fallback, cached: true, stale: true }
        }
        throw error
      }
    },
    get size () { return entries.size },
    get bytes () { return bytes },
    clear () {
      entries.clear()
      bytes = 0
    }
  }
}
