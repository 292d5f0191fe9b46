/**
 * The lookup cache's in-process tier: lru-cache under a budget that holds
 * what the entries really cost (their answers, their keys and the
 * bookkeeping around them: `maxSize` and `sizeCalculation`), each entry
 * kept until its stale time (its TTL, measured by the gateway's clock: the
 * `perf` option), with a cap on their number. Coalescing, stale-if-error and
 * the memory of failures sit around it (upstream/policies/cache.ts).
 */
import { LRUCache } from 'lru-cache'
import { systemClock, type Clock } from '../../clock.ts'
import type { LookupEntry, LookupStore } from '../types.ts'

export interface MemoryLookupStoreOptions {
  /** Budget of the entries, in bytes of memory (see ENTRY_OVERHEAD_BYTES). */
  maxBytes: number
  /** Entries kept at most. */
  maxEntries: number
  /** How often entries past their stale time are swept out (ms). */
  sweepMs?: number
  clock?: Clock
}

/**
 * What one entry costs beyond its value and its key: lru-cache's key map
 * slot and the seven array slots it keeps an entry in (key, value, next,
 * previous, size, TTL, start), and the entry record. Measured with
 * --expose-gc, a full GC before and after 100,000 entries, five runs
 * (docs/operations.md#how-it-fails): 217 bytes, charged 240. (The hand-written LRU this
 * replaced, a Map re-inserted on use: 149 bytes, charged 160.)
 */
export const ENTRY_OVERHEAD_BYTES = 240

/** A key in the heap: two bytes a character at most (V8 keeps ASCII in one, but a key may hold more). */
export function keyBytes (key: string): number {
  return 2 * key.length
}

const SWEEP_MS = 10_000

export function createMemoryLookupStore<T> ({ maxBytes, maxEntries, sweepMs = SWEEP_MS, clock = systemClock }: MemoryLookupStoreOptions): LookupStore<T> {
  const entries = new LRUCache<string, LookupEntry<T>>({
    // lru-cache needs a positive budget; an entry larger than it is not kept, so 0 keeps nothing, as it says.
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (entry, key) => entry.bytes + keyBytes(key) + ENTRY_OVERHEAD_BYTES,
    perf: { now: clock },
    // The clock is read each time: with the default (1 ms), lru-cache starts a timer on every read of it.
    ttlResolution: 0
  })
  // Not lru-cache's `max`: it allocates its arrays for that many entries up front (10 million may be configured).
  const trim = (): void => {
    while (entries.size > maxEntries) entries.pop()
  }

  /** Entries past their stale time; otherwise only a lookup of the same key would drop them. */
  const sweeper = setInterval(() => { entries.purgeStale() }, sweepMs)
  sweeper.unref()

  return {
    get: (key) => entries.get(key),
    peek: (key) => entries.peek(key),
    set (key, entry) {
      // Kept until its stale time, counted from when the hub answered; an entry already past it is not kept.
      const ttl = entry.staleUntil - entry.fetchedAt
      if (ttl <= 0 || clock() >= entry.staleUntil) {
        entries.delete(key)
        return
      }
      entries.set(key, entry, { ttl, start: entry.fetchedAt })
      trim()
    },
    delete: (key) => { entries.delete(key) },
    get size () { return entries.size },
    get bytes () { return entries.calculatedSize },
    clear: () => { entries.clear() },
    close () {
      clearInterval(sweeper)
    }
  }
}
