/**
 * The gateway's shared state, behind one interface per kind of state: held in
 * this process's memory for one instance, or in Redis (state/redis/) so that
 * several replicas keep the promises one instance keeps. See docs/redis.md.
 */
import type { BeginResult, IdempotencyStore, StoredResponse } from '../idempotency/store.ts'

export type { BeginResult, IdempotencyStore, StoredResponse }

/** Redis health as the gateway reports it (/health/ready data, a metric). */
export type StoreHealth = 'up' | 'down'

// 1. Lookup cache: a shared tier behind each replica's memory LRU (which stays in front and
//    keeps coalescing identical concurrent lookups in-process). A value is our JSON of one hub
//    answer (the `data` member, already transcoded) plus what the envelope needs.
export interface SharedLookupEntry {
  /** Our JSON of `data`, UTF-8. */
  json: Buffer
  /** Items of a list answer; undefined for a record. */
  count: number | undefined
  upstreamStatus: number
  /** When the hub answered (ms epoch), so that `age` is the same on every replica. */
  fetchedAt: number
  /** Fresh until (ms epoch). */
  expiresAt: number
  /** May be served on hub failure until (ms epoch); the Redis TTL. */
  staleUntil: number
}

export interface SharedLookupTier {
  /** The entry, or undefined on a miss, an expired entry, or any Redis trouble (never throws, never waits longer than the command timeout). */
  get (key: string): Promise<SharedLookupEntry | undefined>
  /** Best effort: stored with PX = staleUntil - now; never throws. Entries over maxEntryBytes are not stored. */
  set (key: string, entry: SharedLookupEntry): Promise<void>
}

// 2. Idempotency: IdempotencyStore of src/idempotency/store.ts. A shared store's begin() rejects
//    with an error whose `code` is 'STATE_UNAVAILABLE' (state/errors.ts) when it cannot answer.

// 3. Rate limits: @fastify/rate-limit's `store` option (state/redis/rate-limit-store.ts).

// 4. Events (/v1/events fan-out).
export interface GatewayEvent {
  /** UUID: clients can drop a duplicate. */
  id: string
  type: 'booking.booked'
  /** ISO date-time. */
  occurredAt: string
  requestId: string
  /** The client whose write caused it (internal: used to decide which sockets may see it; null when authentication is off). */
  client: string | null
  data: Record<string, unknown>
}

export interface EventBus {
  /** Delivers to every subscriber of every replica exactly once (this replica's included). Never throws; with Redis down, local subscribers still get it. */
  publish (event: GatewayEvent): Promise<void>
  /** Returns the unsubscribe function. */
  subscribe (listener: (event: GatewayEvent) => void): () => void
  close (): Promise<void>
}

// 5. Hub token (UPSTREAM_CREDENTIALS=login): one login for all replicas.
export interface HubSession {
  authorization: string
  /** ms epoch. */
  expiresAt: number
}

export interface TokenStore {
  /** The current shared session, if any (undefined on Redis trouble: the caller then logs in itself). */
  get (): Promise<HubSession | undefined>
  /**
   * A new session. `rejected` is the authorization the hub just refused (401), or undefined for a
   * first login / renewal. If another holder (replica) already replaced `rejected`, its session is
   * returned without a login. Otherwise `login` runs under a cluster-wide lock (SET NX PX), its
   * session is stored with PX until expiry, and the lock released; a holder that finds the lock
   * taken waits (bounded) for the new session instead of logging in. So a 401 seen by several
   * replicas at once gives ONE login.
   */
  renew (rejected: string | undefined, login: () => Promise<HubSession>): Promise<HubSession>
}
