import { systemClock, type Clock } from '../../clock.ts'
import type { IdempotencyStore, StoredResponse } from '../types.ts'

export interface MemoryIdempotencyOptions {
  /** How long a completed answer is replayed. */
  ttlMs: number
  /** Completed keys kept at most; the oldest are forgotten first. */
  maxEntries: number
  clock?: Clock
}

type Entry =
  | { state: 'in-flight', fingerprint: string, settled: Promise<void>, settle: () => void }
  | { state: 'completed', fingerprint: string, response: StoredResponse, expiresAt: number }

/**
 * One process's store: a Map in insertion order, which is also expiry order
 * for completed entries (each is re-inserted when it completes and all live
 * equally long), so expiry and eviction both take from the front.
 */
export function createMemoryIdempotencyStore ({ ttlMs, maxEntries, clock = systemClock }: MemoryIdempotencyOptions): IdempotencyStore {
  const entries = new Map<string, Entry>()
  let completed = 0

  function remove (key: string, entry: Entry) {
    entries.delete(key)
    if (entry.state === 'completed') completed--
  }

  /** Drops expired answers, then the oldest while over the bound; keys in flight stay. */
  function prune () {
    const at = clock()
    for (const [key, entry] of entries) {
      if (entry.state !== 'completed') continue
      if (entry.expiresAt > at && completed <= maxEntries) break
      remove(key, entry)
    }
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
      return { state: 'completed', response: entry.response }
    },
    async complete (key, response) {
      const entry = entries.get(key)
      if (entry?.state !== 'in-flight') return
      entries.delete(key)
      entries.set(key, { state: 'completed', fingerprint: entry.fingerprint, response, expiresAt: clock() + ttlMs })
      completed++
      entry.settle()
      prune()
    },
    async release (key) {
      const entry = entries.get(key)
      if (entry?.state !== 'in-flight') return
      entries.delete(key)
      entry.settle()
    },
    async size () {
      return entries.size
    }
  }
}
