import { systemClock, type Clock } from '../../clock.ts'
import { StateUnavailableError } from '../errors.ts'
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from '../types.ts'

export interface MemoryIdempotencyOptions {
  /** How long a completed (or unknown) key is kept. */
  ttlMs: number
  /** Settled keys kept at most; the oldest are forgotten first. */
  maxEntries: number
  clock?: Clock
}

/** A claimed or sending key: `owner` is the claim's own token (its object). */
interface InFlight {
  state: 'claimed' | 'sending'
  fingerprint: string
  owner: object
  settled: Promise<void>
  settle: () => void
}

type Entry =
  | InFlight
  | { state: 'completed', fingerprint: string, response: StoredResponse, expiresAt: number }
  | { state: 'unknown', fingerprint: string, expiresAt: number }

const inFlight = (entry: Entry): entry is InFlight =>
  entry.state === 'claimed' || entry.state === 'sending'

/**
 * One process's store: a Map in insertion order, which is also expiry order
 * for settled entries (each is re-inserted when it settles and all live
 * equally long), so expiry and eviction both take from the front. A claim
 * cannot outlive its owner here (both are in this process), so a key is
 * unknown only when its own request said so; the states and their rules are
 * the shared store's all the same.
 */
export function createMemoryIdempotencyStore ({
  ttlMs,
  maxEntries,
  clock = systemClock
}: MemoryIdempotencyOptions): IdempotencyStore {
  const entries = new Map<string, Entry>()
  let settledCount = 0

  function remove (key: string, entry: Entry) {
    entries.delete(key)
    if (!inFlight(entry)) settledCount--
  }

  /** Drops expired entries, then the oldest while over the bound; keys in flight stay. */
  function prune () {
    const at = clock()
    for (const [key, entry] of entries) {
      if (inFlight(entry)) continue
      if (entry.expiresAt > at && settledCount <= maxEntries) break
      remove(key, entry)
    }
  }

  /** The key's entry while it holds this claim. */
  function held (key: string, owner: object): InFlight | undefined {
    const entry = entries.get(key)
    return entry !== undefined && inFlight(entry) && entry.owner === owner ? entry : undefined
  }

  /** Replaces the claim with its outcome (none: the key is free), and wakes those waiting on it. */
  type Outcome = 'released' | { response: StoredResponse } | 'unknown'
  function settle (key: string, owner: object, outcome: Outcome) {
    const entry = held(key, owner)
    if (entry === undefined) return
    entries.delete(key)
    const { fingerprint } = entry
    const expiresAt = clock() + ttlMs
    if (outcome === 'unknown') entries.set(key, { state: 'unknown', fingerprint, expiresAt })
    else if (outcome !== 'released') {
      entries.set(key, { state: 'completed', fingerprint, response: outcome.response, expiresAt })
    }
    if (outcome !== 'released') settledCount++
    entry.settle()
    prune()
  }

  function claimOf (key: string, owner: object): IdempotencyClaim {
    return {
      async sending () {
        const entry = held(key, owner)
        if (entry === undefined) {
          throw new StateUnavailableError('the idempotency claim is no longer held')
        }
        entry.state = 'sending'
      },
      async complete (response) {
        settle(key, owner, { response })
      },
      async release () {
        settle(key, owner, 'released')
      },
      async abandon () {
        settle(key, owner, 'unknown')
      }
    }
  }

  return {
    async begin (key, fingerprint) {
      prune()
      const entry = entries.get(key)
      if (entry === undefined) {
        let settle = () => {}
        const settled = new Promise<void>((resolve) => {
          settle = resolve
        })
        const owner = {}
        entries.set(key, { state: 'claimed', fingerprint, owner, settled, settle })
        return { state: 'acquired', claim: claimOf(key, owner) }
      }
      if (entry.fingerprint !== fingerprint) return { state: 'mismatch' }
      if (inFlight(entry)) return { state: 'in-flight', settled: entry.settled }
      if (entry.state === 'unknown') return { state: 'unknown' }
      return { state: 'completed', response: entry.response }
    },
    async size () {
      return entries.size
    },
    pending: () => 0
  }
}
