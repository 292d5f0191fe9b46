/**
 * The gateway's shared state, behind one interface per kind of state: held in
 * this process's memory for one instance (state/memory/), or in Redis
 * (state/redis/) so that several replicas keep the promises one instance
 * keeps. createState (state/index.ts) picks the implementations, in one
 * place; the plugins speak only these interfaces. See docs/deployment.md#redis.
 */
import type { FastifyRateLimitStore } from '@fastify/rate-limit'

/**
 * Redis health as the gateway reports it (/health/ready data, a metric):
 * `refusing-writes` is a Redis that answers but refuses to store anything
 * (out of memory under noeviction, a replica after a failover, a disk that
 * cannot take its append-only file).
 */
export type StoreHealth = 'up' | 'down' | 'refusing-writes'

/**
 * What a shared store throws when it cannot answer and a guess could cost a
 * second hub write (Redis down, too slow, or holding a value this version
 * cannot read): an error whose `code` is STATE_UNAVAILABLE (state/errors.ts).
 */
export interface StateUnavailable extends Error {
  readonly code: 'STATE_UNAVAILABLE'
}

/** Whether a caught value is a store's STATE_UNAVAILABLE (beside the interfaces its users read). */
export function isStateUnavailable (error: unknown): error is StateUnavailable {
  return error instanceof Error && 'code' in error && error.code === 'STATE_UNAVAILABLE'
}

// 1. Lookup cache. Each replica keeps recent answers in its own memory (a LookupStore: an LRU
//    under a byte budget, read synchronously so that identical concurrent lookups coalesce
//    in-process); the coalescing, stale-if-error and failure memory around it are the hub
//    client's cache policy (upstream/policies/cache.ts).

/** One answer as a replica's own memory keeps it. */
export interface LookupEntry<T> {
  value: T
  /** The value's size in bytes; the store adds what keeping it costs (its key, its bookkeeping). */
  bytes: number
  /** When the hub answered (ms epoch). */
  fetchedAt: number
  /** Fresh until (ms epoch). */
  expiresAt: number
  /** May be served on a hub failure until (ms epoch); dropped after. */
  staleUntil: number
}

/** The budget of a replica's memory of lookups (CACHE_MAX_BYTES, and a fixed ceiling on entries). */
export interface LookupBudget {
  /** Bytes of memory its entries may be charged: their answers, their keys and the bookkeeping. */
  maxBytes: number
  /** Entries kept at most. */
  maxEntries: number
}

export interface LookupStore<T> {
  /** The entry, marked as the most recently used. */
  get (key: string): LookupEntry<T> | undefined
  /** The entry, leaving its place in the order as it is. */
  peek (key: string): LookupEntry<T> | undefined
  /** Keeps the entry in place of any other under its key; one larger than the whole budget, or already past its stale time, is not kept. */
  set (key: string, entry: LookupEntry<T>): void
  delete (key: string): void
  readonly size: number
  /** Bytes charged for the entries held. */
  readonly bytes: number
  clear (): void
  /** Stops its timers. */
  close (): void
}

//    A shared tier behind each replica's memory LRU (which stays in front and
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

// 2. Idempotency: where idempotent writes remember their answers (plugins/idempotency.ts).
//    A shared store's begin() is an atomic "set if absent", and `in-flight` is answered by
//    waiting until the key settles; when it cannot answer, begin() rejects with an error
//    whose `code` is 'STATE_UNAVAILABLE' (state/errors.ts). A key's states (docs/operations.md#at-most-once):
//    claimed (nothing sent yet; a claim whose owner vanished is free once its lease ends),
//    sending (the hub call may have started: never sent again), then completed (a 2xx kept),
//    free again (released: the hub was not called, or did not act), or unknown (abandoned, or
//    a sending key whose lease ended). A key once answered unknown stays so.

/** A 2xx answer as it was sent, replayed byte for byte. */
export interface StoredResponse {
  statusCode: number
  /** The headers worth replaying (content-type, cache-control). */
  headers: Record<string, string>
  body: string
  /** The hub's status for the original call, for audit lines of replays. */
  upstreamStatus?: number
}

/**
 * One request's claim on a key. Every step applies only while the key still
 * holds this claim (its own token): a late step of a claim whose lease ended
 * never touches the key another request has claimed since, nor one answered
 * unknown meanwhile. Settled once (complete, release or abandon); an outcome
 * the store cannot take now waits for it (pending()).
 */
export interface IdempotencyClaim {
  /**
   * claimed -> sending, before the hub call: from here on the key is never
   * sent again. Rejects (STATE_UNAVAILABLE) when the store cannot record it,
   * or the key no longer holds this claim: then nothing may be sent.
   */
  sending (): Promise<void>
  /** Keeps the answer for the store's lifetime (TTL). */
  complete (response: StoredResponse): Promise<void>
  /** Frees the key: its request never reached the hub, or the hub did not act on it. */
  release (): Promise<void>
  /** It may have reached the hub, with no answer to keep: `unknown` for the store's lifetime. */
  abandon (): Promise<void>
}

export type BeginResult =
  /** The caller owns the key: mark it sending before the hub call, then settle it. */
  | { state: 'acquired', claim: IdempotencyClaim }
  /** Answered before with the same request: replay it. */
  | { state: 'completed', response: StoredResponse }
  /** The key was used with a different request. */
  | { state: 'mismatch' }
  /** The same request is being answered right now: wait, then `begin` again. */
  | { state: 'in-flight', settled: Promise<void> }
  /**
   * An earlier request with the key may have reached the hub and left no
   * answer (its call failed past the point of no return, or its owner died
   * while sending): it must not be sent again under this key.
   */
  | { state: 'unknown' }

export interface IdempotencyStore {
  /** Claims `key` for a request with this fingerprint, or says why not. */
  begin (key: string, fingerprint: string): Promise<BeginResult>
  /** Keys held: claimed, sending, answered or unknown. */
  size (): Promise<number>
  /** Outcomes (and releases) not yet written because the store failed: they wait for it. */
  pending (): number
  /** Called with the time (ms) from the store answering again to the outcomes waiting written. */
  onFlush? (listener: (ms: number) => void): void
}

// 3. Rate limits: @fastify/rate-limit counts in a store of its `store` option, a class it
//    instantiates with its settings (and whose child() it calls for a route's own limit).

/** What the plugin calls back with: the count in the window and the time left of it (ms). */
export type RateLimitCallback = (error: Error | null, result?: { current: number, ttl: number }) => void

/** A store as the plugin uses it: its types leave out `read`, which it calls for `{ increment: false }`. */
export interface RateLimitStore extends FastifyRateLimitStore {
  read (key: string, callback: RateLimitCallback, timeWindow: number, max: number): void
}

/** The `store` option: the plugin passes its merged settings (`continueExceeding`, `exponentialBackoff`, ...). */
export type RateLimitStoreClass = new (params: object) => RateLimitStore

// 4. Events (/v1/events): an ordered log of the recent events, shared by every replica.
//    Ids are positions in it (state/event-ids.ts), the same on every replica; readers
//    resume from the last one they saw within the window (docs/api.md#events).
export interface GatewayEvent {
  /** Its position in the log, `<ms>-<seq>` (state/event-ids.ts). */
  id: string
  type: 'booking.booked'
  /** ISO date-time. */
  occurredAt: string
  requestId: string
  /** The client whose write caused it (internal: used to decide which sockets may see it; null when authentication is off). */
  client: string | null
  data: Record<string, unknown>
}

/** An event as published: the log gives it its id. */
export type NewEvent = Omit<GatewayEvent, 'id'>

/**
 * Written into the log where events were lost (more were published during a
 * Redis outage than a replica could hold): every reader is told to reload.
 */
export interface EventsLost {
  id: string
  type: 'events.lost'
  /** When the replica that lost them could write again. */
  occurredAt: string
  /** How many were lost. */
  lost: number
}

export type LogEntry = GatewayEvent | EventsLost

export type Replay =
  /** The entries after the id, in order (possibly none). */
  | { state: 'replayed', entries: LogEntry[] }
  /** The id is not a position the window still holds (older, trimmed, from a log since lost, or never given out). */
  | { state: 'expired' }
  /** The log cannot be read right now (Redis down). */
  | { state: 'unavailable' }

export interface EventLog {
  /**
   * Appends the event under a new id; every subscriber of every replica (this
   * one's included) gets it once, in log order. Never throws. With Redis
   * unreachable, the event waits in a bounded queue of this replica and is
   * appended, in order, when Redis answers again; past the bound, the oldest
   * are dropped and an `events.lost` entry takes their place.
   */
  publish (event: NewEvent): Promise<void>
  /** Every entry appended from now on, in log order; returns the unsubscribe function. */
  subscribe (listener: (entry: LogEntry) => void): () => void
  /** What the window holds after `id` (see Replay). */
  since (id: string): Promise<Replay>
  /** The id of the last entry handed to subscribers (FIRST_POSITION before any). */
  position (): string
  close (): Promise<void>
}

/** The window an event log keeps (EVENTS_REPLAY_SECONDS, EVENTS_REPLAY_MAX). */
export interface EventWindow {
  windowMs: number
  maxEntries: number
}

/** Short-lived, single-use tickets that stand for a client's key on GET /v1/events/stream (EventSource cannot send headers). */
export interface TicketStore {
  /** Keeps the ticket (a random secret) for the client (its name; null without authentication) for ttlMs. Rejects with STATE_UNAVAILABLE on Redis trouble. */
  issue (ticket: string, client: string | null, ttlMs: number): Promise<void>
  /** The client the ticket was issued to, the first time only; undefined for an unknown, used or expired ticket. Rejects with STATE_UNAVAILABLE on Redis trouble. */
  redeem (ticket: string): Promise<{ client: string | null } | undefined>
}

// 5. Hub token (UPSTREAM_CREDENTIALS=login): one login for all replicas.
export interface HubSession {
  /** The value sent to the hub with each call (its scheme included). */
  authorization: string
  /** ms epoch. */
  expiresAt: number
  /** When to renew it (ms epoch, before expiresAt); unset: the holder's own margin before expiresAt. */
  renewAt?: number
  /** The hub's refresh token, which renews the session without a login (at login.refreshPath). */
  refreshToken?: string
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
   * replicas at once gives ONE login. `login` is whatever renews the session: a refresh with the
   * refused session's refresh token, or a new login.
   */
  renew (rejected: string | undefined, login: () => Promise<HubSession>): Promise<HubSession>
}

/**
 * The gateway's state, as createState chose it. (The lookup cache keeps its
 * own in-process tier in front of the shared one: see SharedLookupTier.)
 */
export interface GatewayState {
  idempotency: IdempotencyStore
  rateLimitStore: RateLimitStoreClass
  events: EventLog
  tickets: TicketStore
  tokens: TokenStore
  /**
   * Makes a replica's own memory of lookups, under `budget`: where the hub
   * client's cache keeps its entries, in front of lookupTier. This
   * process's memory whatever the state (the cache coalesces in-process).
   */
  lookupStore<T> (budget: LookupBudget): LookupStore<T>
  /**
   * The shared tier of the lookup cache, behind each replica's memory tier;
   * undefined when the state is in memory (the memory tier is all there is).
   */
  lookupTier?: SharedLookupTier
  /** Present when the state is in Redis: its health, for /health/ready and the gateway_redis_up gauge. */
  redis?: {
    health (): StoreHealth
    /** Resolves true as soon as Redis is up, false when timeoutMs passed first. */
    whenUp (timeoutMs: number): Promise<boolean>
  }
  /** Ends what the state holds open (subscriptions, connections); called when the app closes. */
  close (): Promise<void>
}
