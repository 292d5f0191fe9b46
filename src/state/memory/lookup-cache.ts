/**
 * The lookup cache's in-process tier: an LRU under a budget that holds what
 * the entries really cost (their answers, their keys and the bookkeeping
 * around them), with a cap on their number. Coalescing, stale-if-error and
 * the memory of failures sit around it (upstream/policies/cache.ts).
 */
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
 * What one entry costs beyond its value and its key: the Map's slot and the
 * entry record, 141 bytes of heap (measured with --expose-gc, a full GC
 * before and after 100,000 entries; docs/resilience.md), rounded up.
 */
export const ENTRY_OVERHEAD_BYTES = 160

/** A key in the heap: two bytes a character at most (V8 keeps ASCII in one, but a key may hold more). */
export function keyBytes (key: string): number {
  return 2 * key.length
}

const SWEEP_MS = 10_000

export function createMemoryLookupStore<T> ({ maxBytes, maxEntries, sweepMs = SWEEP_MS, clock = systemClock }: MemoryLookupStoreOptions): LookupStore<T> {
  // A Map iterates in insertion order: re-inserting on use makes it an LRU.
  const entries = new Map<string, LookupEntry<T>>()
  let bytes = 0

  const charged = (key: string, entry: LookupEntry<T>): number => entry.bytes + keyBytes(key) + ENTRY_OVERHEAD_BYTES

  function remove (key: string): void {
    const entry = entries.get(key)
    if (entry === undefined) return
    entries.delete(key)
    bytes -= charged(key, entry)
  }

  /** Entries past their stale time; otherwise only a lookup of the same key would drop them. */
  const sweeper = setInterval(() => {
    const now = clock()
    for (const [key, entry] of entries) if (now >= entry.staleUntil) remove(key)
  }, sweepMs)
  sweeper.unref()

  return {
    get (key) {
      const entry = entries.get(key)
      if (entry !== undefined) {
        entries.delete(key)
        entries.set(key, entry)
      }
      return entry
    },
    peek (key) {
      return entries.get(key)
    },
    set (key, entry) {
      remove(key)
      const cost = charged(key, entry)
      if (cost > maxBytes || entry.staleUntil <= entry.fetchedAt) return
      entries.set(key, entry)
      bytes += cost
      for (const [oldest] of entries) {
        if (bytes <= maxBytes && entries.size <= maxEntries) break
        remove(oldest)
      }
    },
    delete: remove,
    get size () { return entries.size },
    get bytes () { return bytes },
    clear () {
      entries.clear()
      bytes = 0
    },
    close () {
      clearInterval(sweeper)
    }
  }
}
