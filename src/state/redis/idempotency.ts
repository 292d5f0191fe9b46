import { createHash, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from '../types.ts'
import { StateUnavailableError } from '../errors.ts'
import { redisReason, type RedisConnection } from './connection.ts'

export interface RedisIdempotencyOptions {
  connection: RedisConnection
  /**
   * How long a key is kept once sent: its answer replayed, or its outcome
   * told unknown (IDEMPOTENCY_TTL_SECONDS).
   */
  ttlMs: number
  /**
   * The lease of a claim, and again of its sending: how long its owner may
   * take (the request deadline plus a margin). A claim past it, never sent,
   * has expired: the key is free. A key being sent past it belongs to a
   * replica that died or lost Redis while its write may have been at the
   * hub: it answers "outcome unknown" from then on.
   */
  claimTtlMs: number
  /**
   * The longest one `in-flight` answer's `settled` waits before the caller asks again (default
   * claimTtlMs).
   */
  waitMs?: number
  /**
   * While the master has replicas in sync, a write is sent only once every
   * one of them holds its `sending` mark too (WAIT n), waited for this long
   * at most; otherwise sending() refuses (STATE_UNAVAILABLE). 0: never wait (default).
   */
  replicaAckTimeoutMs?: number
}

/** Format of the claims written (3: claimed, then sending); outcomes keep format 2. */
const VERSION = 3
const OUTCOME_VERSION = 2
/** Polling a claim held elsewhere: from this interval, doubling, up to the next. */
const POLL_FIRST_MS = 10
const POLL_MAX_MS = 200
/**
 * Outcomes waiting for a Redis that answers but refuses them (full, without
 * its replicas after a restart, a timeout): the first is tried again this
 * often (the others after it), not on a backoff: the health check that would
 * say Redis takes writes again comes only every second. A Redis that is down
 * is not tried: its return (ready) flushes them.
 */
const RETRY_MS = 100

/**
 * The values of a key. Format 3 claims are `claimed` (freed by expiring at the
 * end of their lease), then `sending` (the lease, by Redis's clock, after which
 * the key is unknown). Formats 1 and 2 (earlier gateways) wrote `in-flight`
 * claims: version 1 expiring and leaving the key free, version 2 with a lease
 * by the writer's clock, living as long as an answer would.
 */
type Value =
  | { state: 'claimed', fingerprint: string }
  | { state: 'sending', fingerprint: string, leaseUntil: number }
  | { state: 'in-flight', fingerprint: string, leaseUntil?: number }
  | { state: 'completed', fingerprint: string, response: StoredResponse }
  | { state: 'unknown', fingerprint: string }

/** This request's claim: the exact value written and its token, which the scripts compare. */
interface Claim {
  key: string
  value: string
  token: string
  fingerprint: string
  claimedAt: number
}

type Settlement = 'complete' | 'release' | 'abandon' | 'discard'

/** An outcome waiting for Redis, until it is stored or the key's life is over. */
interface Waiting { what: Settlement, until: number, run: () => Promise<number> }

export function idempotencyKey (key: string): string {
  return `idempotency:${createHash('sha256').update(key).digest('base64url')}`
}

function decode (text: string): Value | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  const { v, state, fingerprint, response, leaseUntil, token } = value as Record<string, unknown>
  if (typeof fingerprint !== 'string') return undefined
  if (v === VERSION) {
    if (typeof token !== 'string') return undefined
    if (state === 'claimed') return { state, fingerprint }
    if (state === 'sending' && typeof leaseUntil === 'number') {
      return { state, fingerprint, leaseUntil }
    }
    return undefined
  }
  if (v !== 1 && v !== 2) return undefined
  if (state === 'completed' && response !== null && typeof response === 'object') {
    return { state, fingerprint, response: response as StoredResponse }
  }
  if (state === 'in-flight' && v === 1) return { state, fingerprint }
  if (state === 'in-flight' && typeof leaseUntil === 'number') {
    return { state, fingerprint, leaseUntil }
  }
  if (state === 'unknown' && v === 2) return { state, fingerprint }
  return undefined
}

function unavailable (
  error: unknown,
  message = 'the idempotency store (Redis) did not answer'
): StateUnavailableError {
  return new StateUnavailableError(message, { cause: new Error(redisReason(error)) })
}

/**
 * Idempotent writes shared by every replica (see IdempotencyStore), at most
 * once. A claim is one atomic script (SET NX, or what holds the key), kept
 * for its lease: a claim whose owner died, or lost Redis, before its hub
 * call frees the key by expiring. Before the hub call the owner marks the
 * key `sending` (the point of no return), acknowledged by every Redis
 * replica in sync; a key being sent whose lease passes unsettled becomes
 * `unknown` (OUTCOME_UNKNOWN) for the rest of its life, and a late outcome
 * of its owner no longer changes it. Every step compares the claim's own
 * token, so a replica that outlived its lease never touches a key claimed
 * since. Leases are read by Redis's clock.
 *
 * When Redis cannot answer, begin() refuses (STATE_UNAVAILABLE) rather than
 * risk a second hub write; an outcome Redis did not take (down, full,
 * read-only) waits for it, is written as soon as it answers again, and is
 * counted by pending() meanwhile.
 */
export function createRedisIdempotencyStore (options: RedisIdempotencyOptions): IdempotencyStore {
  const { connection, ttlMs, claimTtlMs } = options
  const waitMs = options.waitMs ?? claimTtlMs
  const ackTimeoutMs = options.replicaAckTimeoutMs ?? 0
  const { client, scripts, log } = connection
  const waiting = new Map<string, Waiting>()
  const flushListeners = new Set<(ms: number) => void>()
  let retryTimer: NodeJS.Timeout | undefined
  /** When Redis answered again with outcomes waiting (performance.now()). */
  let upAt: number | undefined
  let flushing: Promise<void> | undefined

  /**
   * Resolves when the value `held` no longer holds the key, or after `boundMs` (or waitMs), or when
   * Redis fails.
   */
  async function settled (key: string, held: string, boundMs: number): Promise<void> {
    // Just past the lease (or the legacy claim's expiry), so that the last poll finds it over.
    const deadline = Date.now() + Math.min(waitMs, boundMs >= 0 ? boundMs + POLL_FIRST_MS : waitMs)
    let interval = POLL_FIRST_MS
    while (Date.now() < deadline) {
      await sleep(Math.min(interval, Math.max(0, deadline - Date.now())))
      interval = Math.min(interval * 2, POLL_MAX_MS)
      // The caller asks again, and hears that Redis is unavailable.
      if (connection.health() === 'down') return
      try {
        if (await client.get(key) !== held) return
      } catch {
        return
      }
    }
  }

  function report (what: Settlement, result: number, waited: boolean) {
    if (result !== 0 || what === 'discard') return
    const message = `idempotency: ${what} found the key no longer this request's ` +
      '(its lease ended: it was freed, claimed again or answered unknown); left as it is'
    if (waited) log.error(message)
    else log.warn(message)
  }

  /**
   * Runs a settling script. The answer has been sent whatever Redis does:
   * when it fails, the outcome waits for Redis (flush).
   */
  async function settle (what: Settlement, id: string, until: number,
    run: () => Promise<number>): Promise<void> {
    try {
      if (connection.health() === 'down') throw new Error('redis is down')
      report(what, await run(), false)
    } catch (error) {
      connection.noteError(error)
      if (what !== 'discard') {
        log.warn({ reason: redisReason(error) }, `idempotency: ${what} failed; it waits for Redis`)
      }
      waiting.set(id, { what, until, run })
      schedule()
    }
  }

  function schedule () {
    if (retryTimer !== undefined || connection.health() === 'down') return
    retryTimer = setTimeout(() => {
      retryTimer = undefined
      flush().catch(() => {})
    }, RETRY_MS)
    retryTimer.unref()
  }

  /** Writes every outcome waiting, at once; one flush at a time. */
  function flush (): Promise<void> {
    flushing ??= drain().finally(() => { flushing = undefined })
    return flushing
  }

  async function drain () {
    const now = Date.now()
    for (const [id, item] of waiting) {
      if (now < item.until) continue
      waiting.delete(id)
      if (item.what === 'discard') continue
      log.error(`idempotency: ${item.what} was never stored; the key expires with its claim`)
    }
    const [head, ...rest] = [...waiting]
    if (head !== undefined && connection.health() !== 'down') {
      // The first alone while Redis may still refuse: the others would fail with it.
      const [firstId, first] = head
      const stored = await first.run().then((result) => {
        waiting.delete(firstId)
        report(first.what, result, true)
        // Redis takes writes again, though its health may not say so yet.
        upAt ??= performance.now()
        return true
      }, (error: unknown) => {
        connection.noteError(error)
        return false
      })
      const results = stored ? await Promise.allSettled(rest.map(([, item]) => item.run())) : []
      results.forEach((result, i) => {
        const [id, item] = rest[i]!
        if (result.status === 'rejected') return connection.noteError(result.reason)
        waiting.delete(id)
        report(item.what, result.value, true)
      })
    }
    if (waiting.size > 0) {
      schedule()
      return
    }
    if (upAt === undefined) return
    const ms = performance.now() - upAt
    upAt = undefined
    log.info({ ms: Math.round(ms) }, 'idempotency: the outcomes waiting for Redis are stored')
    for (const listener of flushListeners) listener(ms)
  }

  // Redis answers again (connected and ready, or taking writes again): what waits is written now.
  connection.onHealthChange((health) => {
    // Measured from its last return: an outage (or refusal) in between starts the window again.
    if (health !== 'up') upAt = undefined
    if (health !== 'up' || waiting.size === 0) return
    upAt ??= performance.now()
    flush().catch(() => {})
  })

  function claimOf (claim: Claim): IdempotencyClaim {
    const { key, token, fingerprint } = claim
    let settledAs: Settlement | undefined
    const finish = (what: Settlement, value: string): Promise<void> => {
      if (settledAs !== undefined) return Promise.resolve()
      settledAs = what
      // Replicated too, else written again (the same value: idempotent) until it is: a master
      // losing a replica at that moment (a failover) would otherwise keep it alone. Each run
      // counts the replicas afresh: after a failover, the new master's.
      const run = async () => {
        const result = await scripts.stateFinish(key, token, value, ttlMs, connection.replicas())
        await connection.replicated(ackTimeoutMs)
        return result
      }
      return settle(what, `${token}\n${what}`, claim.claimedAt + ttlMs, run)
    }
    return {
      async sending () {
        const health = connection.health()
        if (health !== 'up') throw unavailable(new Error(`redis is ${health}`))
        let marked: number
        try {
          marked = await scripts.stateSend(key, claim.value, claimTtlMs, ttlMs)
        } catch (error) {
          connection.noteError(error)
          throw unavailable(error)
        }
        if (marked === 0) {
          throw new StateUnavailableError('the idempotency claim ended before the write was sent')
        }
        try {
          await connection.replicated(ackTimeoutMs)
        } catch (error) {
          throw unavailable(error, 'the idempotency claim did not reach the Redis replicas in time')
        }
      },
      complete: (response) => finish('complete',
        JSON.stringify({ v: OUTCOME_VERSION, state: 'completed', fingerprint, response })),
      release: () => finish('release', ''),
      abandon: () =>
        finish('abandon', JSON.stringify({ v: OUTCOME_VERSION, state: 'unknown', fingerprint }))
    }
  }

  return {
    async begin (callerKey, fingerprint) {
      if (connection.health() !== 'up') {
        throw unavailable(new Error('redis is ' +
        `${connection.health()}`))
      }
      const key = idempotencyKey(callerKey)
      const token = randomUUID()
      const claimedAt = Date.now()
      const value = JSON.stringify({ v: VERSION, state: 'claimed', fingerprint, token })
      let reply
      try {
        reply = await scripts.stateClaim(key, value, claimTtlMs)
      } catch (error) {
        connection.noteError(error)
        // It may have been written all the same (a reply lost, a frozen Redis that runs it
        // later): it frees the key when its lease ends, or sooner when this lands.
        const run = () => scripts.stateFinish(key, token, '', ttlMs, connection.replicas())
        settle('discard', `${token}\ndiscard`, claimedAt + claimTtlMs, run).catch(() => {})
        throw unavailable(error)
      }
      if (reply[0] === 1) {
        return { state: 'acquired', claim: claimOf({ key, value, token, fingerprint, claimedAt }) }
      }
      const [, held, pttl, now] = reply
      const found = decode(held)
      // Written by another version of the gateway: refuse rather than guess.
      if (found === undefined) {
        const message = 'the idempotency key holds a value this version cannot read'
        throw new StateUnavailableError(message)
      }
      if (found.fingerprint !== fingerprint) return { state: 'mismatch' }
      if (found.state === 'completed') return { state: 'completed', response: found.response }
      if (found.state === 'unknown') return { state: 'unknown' }
      if (found.state === 'claimed') {
        return { state: 'in-flight', settled: settled(key, held, pttl) }
      }
      // The claim script turned a key whose lease had passed into `unknown`.
      if (found.state === 'sending') {
        return { state: 'in-flight', settled: settled(key, held, found.leaseUntil - now) }
      }
      if (found.leaseUntil === undefined) {
        return { state: 'in-flight', settled: settled(key, held, pttl) }
      }
      const left = found.leaseUntil - Date.now()
      if (left <= 0) return { state: 'unknown' }
      return { state: 'in-flight', settled: settled(key, held, left) }
    },
    async size () {
      // SCAN patterns get no key prefix from ioredis: it is added here.
      let count = 0
      try {
        for await (const keys of client.scanStream({
          match: `${connection.keyPrefix}idempotency:*`,
          count: 1000
        })) {
          count += (keys as string[]).length
        }
      } catch (error) {
        throw unavailable(error)
      }
      return count
    },
    pending: () => waiting.size,
    onFlush (listener) {
      flushListeners.add(listener)
    }
  }
}
