import { systemClock, type Clock } from '../../clock.ts'
import type { IdempotencyStore, StoredResponse } from '../types.ts'

export interface MemoryIdempotencyOptions {
  /** How long a completed (or unknown) key is kept. */
  ttlMs: number
  /** Settled keys kept at most; the oldest are forgotten first. */
  maxEntries: number
  clock?: Clock
}

type Entry =
  | { state: 'in-flight', fingerprint: string, settled: Promise<void>, settle: () => void }
  | { state: 'completed', fingerprint: string, response: StoredResponse, expiresAt: number }
  | { state: 'unknown', fingerprint: string, expiresAt: number }

/**
 * One process's store: a Map in insertion order, which is also expiry order
 * for settled entries (each is re-inserted when it settles and all live
 * equally long), so expiry and eviction both take from the front. A claim
 * cannot outlive its owner here (both are in this process), so a key is
 * unknown only when its own request said so.
 */
export function createMemoryIdempotencyStore ({ ttlMs, maxEntries, clock = systemClock }: MemoryIdempotencyOptions): IdempotencyStore {
  const entries = new Map<string, Entry>()
  let settledCount = 0

  function remove (key: string, entry: Entry) {
    entries.delete(key)
    if (entry.state !== 'in-flight') settledCount--
  }

  /** Drops expired entries, then the oldest while over the bound; keys in flight stay. */
  function prune () {
    const at = clock()
    for (const [key, entry] of entries) {
      if (entry.state === 'in-flight') continue
      if (entry.expiresAt > at && settledCount <= maxEntries) break
      remove(key, entry)
    }
  }

  /** Replaces the key's in-flight entry with its outcome, and wakes those waiting on it. */
  function settle (key: string, outcome: Entry | undefined) {
    const entry = entries.get(key)
    if (entry?.state !== 'in-flight') return
    entries.delete(key)
    if (outcome !== undefined) {
      entries.set(key, outcome)
      settledCount++
    }
    entry.settle()
    prune()
  }

  return {
    async begin (key, fingerprint) {
      prune()
      const entry = entries.get(key)
      if (entry === undefined) {
        let settle = () => {}
        const settled = new Promise<void>(resolve => { settle = resolve })
        entries.set(key, { state: 'in-flight', fingerprint, settled, settle })
        return { state: 'acquired' }
      }
      if (entry.fingerprint !== fingerprint) return { state: 'mismatch' }
      if (entry.state === 'in-flight') return { state: 'in-flight', settled: entry.settled }
      if (entry.state === 'unknown') return { state: 'unknown' }
      return { state: 'completed', response: entry.response }
    },
    async complete (key, response) {
      const fingerprint = entries.get(key)?.fingerprint ?? ''
      settle(key, { state: 'completed', fingerprint, response, expiresAt: clock() + ttlMs })
    },
    async release (key) {
      settle(key, undefined)
    },
    async abandon (key) {
      const fingerprint = entries.get(key)?.fingerprint ?? ''
      settle(key, { state: 'unknown', fingerprint, expiresAt: clock() + ttlMs })
    },
    async size () {
      return entries.size
    },
    pending: () => 0
  }
}
