/**
 * Where idempotent writes remember their answers. The plugin
 * (plugins/idempotency.ts) only speaks this interface, so that a shared store
 * (Redis, a database) can replace the in-memory one when the gateway runs as
 * several instances: `begin` is then an atomic "set if absent", and
 * `in-flight` is answered by polling until the key completes or is released.
 */

/** A 2xx answer as it was sent, replayed byte for byte. */
export interface StoredResponse {
  statusCode: number
  /** The headers worth replaying (content-type, cache-control). */
  headers: Record<string, string>
  body: string
  /** The hub's status for the original call, for audit lines of replays. */
  upstreamStatus?: number
}

export type BeginResult =
  /** The caller owns the key: do the work, then `complete` or `release`. */
  | { state: 'acquired' }
  /** Answered before with the same request: replay it. */
  | { state: 'completed', response: StoredResponse }
  /** The key was used with a different request. */
  | { state: 'mismatch' }
  /** The same request is being answered right now: wait, then `begin` again. */
  | { state: 'in-flight', settled: Promise<void> }

export interface IdempotencyStore {
  /** Claims `key` for a request with this fingerprint, or says why not. */
  begin (key: string, fingerprint: string): Promise<BeginResult>
  /** Keeps the answer of an acquired key for the store's lifetime (TTL). */
  complete (key: string, response: StoredResponse): Promise<void>
  /** Forgets an acquired key (the request failed): the caller may retry with it. */
  release (key: string): Promise<void>
  /** Keys held, in flight or completed. */
  size (): Promise<number>
}

export interface MemoryStoreOptions {
  /** How long a completed answer is replayed. */
  ttlMs: number
  /** Completed keys kept at most; the oldest are forgotten first. */
  maxEntries: number
  /** The clock, in milliseconds (tests move it). */
  now?: () => number
}

type Entry =
  | { state: 'in-flight', fingerprint: string, settled: Promise<void>, settle: () => void }
  | { state: 'completed', fingerprint: string, response: StoredResponse, expiresAt: number }

/**
 * One process's store: a Map in insertion order, which is also expiry order
 * for completed entries (each is re-inserted when it completes and all live
 * equally long), so expiry and eviction both take from the front.
 */
export function createMemoryStore ({ ttlMs, maxEntries, now = Date.now }: MemoryStoreOptions): IdempotencyStore {
  const entries = new Map<string, Entry>()
  let completed = 0

  function remove (key: string, entry: Entry) {
    entries.delete(key)
    if (entry.state === 'completed') completed--
  }

  /** Drops expired answers, then the oldest while over the bound; keys in flight stay. */
  function prune () {
    const at = now()
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
      entries.set(key, { state: 'completed', fingerprint: entry.fingerprint, response, expiresAt: now() + ttlMs })
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
