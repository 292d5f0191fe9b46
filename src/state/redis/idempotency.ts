import { createHash, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { IdempotencyStore, StoredResponse } from '../types.ts'
import { StateUnavailableError } from '../errors.ts'
import { redisReason, type RedisConnection } from './connection.ts'

export interface RedisIdempotencyOptions {
  connection: RedisConnection
  /** How long a key is kept once claimed: its answer replayed, or its outcome told unknown (IDEMPOTENCY_TTL_SECONDS). */
  ttlMs: number
  /**
   * The lease of a claim: how long its owner may take to settle it (the
   * request deadline plus a margin). A claim still unsettled past it belongs
   * to a replica that died or lost Redis while its write may have been at
   * the hub: its key answers "outcome unknown" from then on.
   */
  claimTtlMs: number
  /** The longest one `in-flight` answer's `settled` waits before the caller asks again (default claimTtlMs). */
  waitMs?: number
  /**
   * While the master has replicas in sync, a claim is used only once every
   * one of them holds it too (WAIT n), waited for this long at most;
   * otherwise the write is refused (STATE_UNAVAILABLE). 0: never wait (default).
   */
  replicaAckTimeoutMs?: number
}

/** Format of the values written; a reader refuses any other rather than guess (versions 1 and 2 are read). */
const VERSION = 2
/** Polling a claim held elsewhere: from this interval, doubling, up to the next. */
const POLL_FIRST_MS = 10
const POLL_MAX_MS = 200
/** Retrying a settlement Redis refused: from this delay, doubling, up to the next. */
const RETRY_FIRST_MS = 100
const RETRY_MAX_MS = 5000

/**
 * The values of a key. Version 1 (gateways before at-most-once) wrote
 * `in-flight` claims that expire by their TTL and leave the key free; version
 * 2 claims carry their lease and live as long as an answer would.
 */
type Value =
  | { state: 'in-flight', fingerprint: string, leaseUntil?: number }
  | { state: 'completed', fingerprint: string, response: StoredResponse }
  | { state: 'unknown', fingerprint: string }

/** This replica's claim on a key: the exact value it wrote, which the scripts compare. */
interface Claim { value: string, fingerprint: string, leaseUntil: number, claimedAt: number }

type Settlement = 'complete' | 'release' | 'abandon'

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
  const { v, state, fingerprint, response, leaseUntil } = value as Record<string, unknown>
  if ((v !== 1 && v !== 2) || typeof fingerprint !== 'string') return undefined
  if (state === 'completed' && response !== null && typeof response === 'object') return { state, fingerprint, response: response as StoredResponse }
  if (state === 'in-flight' && v === 1) return { state, fingerprint }
  if (state === 'in-flight' && typeof leaseUntil === 'number') return { state, fingerprint, leaseUntil }
  if (state === 'unknown' && v === 2) return { state, fingerprint }
  return undefined
}

function unavailable (error: unknown, message = 'the idempotency store (Redis) did not answer'): StateUnavailableError {
  return new StateUnavailableError(message, { cause: new Error(redisReason(error)) })
}

/**
 * Idempotent writes shared by every replica (see IdempotencyStore), at most
 * once. A claim is one atomic script (SET NX, or what holds the key) and
 * means "this request may reach the hub": it lives as long as an answer
 * would, with a lease. Settling it compares the exact value written, so a
 * replica that outlived its lease never overwrites another's claim.
 *
 * A claim whose lease has passed unsettled is never claimed again: its owner
 * died, or lost Redis, while the write may have been at the hub, so the key
 * answers `unknown` (OUTCOME_UNKNOWN) for the rest of its life, unless the
 * owner's answer arrives after all. When Redis cannot answer, begin()
 * refuses (STATE_UNAVAILABLE) rather than risk a second hub write; a
 * settlement Redis did not take (down, full, read-only) is retried in the
 * background as long as the key would live, and counted by pending().
 */
export function createRedisIdempotencyStore (options: RedisIdempotencyOptions): IdempotencyStore {
  const { connection, ttlMs, claimTtlMs } = options
  const waitMs = options.waitMs ?? claimTtlMs
  const ackTimeoutMs = options.replicaAckTimeoutMs ?? 0
  const { client, scripts, log } = connection
  const claims = new Map<string, Claim>()
  const retrying = new Set<string>()

  /** Resolves when the value `held` no longer holds the key, or after `boundMs` (or waitMs), or when Redis fails. */
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

  /**
   * Runs a settling script. The answer has been sent whatever Redis does:
   * when it fails, the script is retried in the background for as long as
   * the key would live.
   */
  async function settle (what: Settlement, claim: Claim, run: () => Promise<number>): Promise<void> {
    try {
      if (connection.health() === 'down') throw new Error('redis is down')
      if (await run() === 0) log.warn(`idempotency: ${what} found the key claimed by another request (this claim had expired)`)
    } catch (error) {
      connection.noteError(error)
      log.warn({ reason: redisReason(error) }, `idempotency: ${what} failed; retrying in the background`)
      const id = `${claim.value}\n${what}`
      retrying.add(id)
      retry(what, claim, run, RETRY_FIRST_MS, id, false)
    }
  }

  function retry (what: Settlement, claim: Claim, run: () => Promise<number>, delay: number, id: string, reported: boolean) {
    const now = Date.now()
    if (now + delay >= claim.claimedAt + ttlMs) {
      retrying.delete(id)
      log.error(`idempotency: ${what} was never stored; the key expires with its claim`)
      return
    }
    // Past the lease, other replicas tell the caller's retries OUTCOME_UNKNOWN: said once, as an error.
    let told = reported
    if (!told && what !== 'release' && now >= claim.leaseUntil) {
      told = true
      log.error(`idempotency: ${what} not stored within the claim's lease; retries of this write are answered OUTCOME_UNKNOWN until it is`)
    }
    setTimeout(() => {
      const attempt = connection.health() === 'down' ? Promise.reject(new Error('redis is down')) : run()
      attempt.then(
        () => {
          retrying.delete(id)
          log.info(`idempotency: ${what} succeeded on a retry`)
        },
        (error: unknown) => {
          connection.noteError(error)
          retry(what, claim, run, Math.min(delay * 2, RETRY_MAX_MS), id, told)
        }
      )
    }, delay).unref()
  }

  /** Writes `value` in place of the claim (or into a key Redis lost), for ttlMs. */
  function replace (key: string, claim: Claim, value: string) {
    return () => scripts.stateSettle(key, claim.value, value, ttlMs)
  }

  /** Frees a key whose claim was written but is not used (a command that failed, or a claim no replica acknowledged). */
  function discard (key: string, claim: Claim) {
    settle('release', claim, () => scripts.stateRelease(key, claim.value)).catch(() => {})
  }

  return {
    async begin (callerKey, fingerprint) {
      if (connection.health() !== 'up') throw unavailable(new Error(`redis is ${connection.health()}`))
      const key = idempotencyKey(callerKey)
      const claimedAt = Date.now()
      const leaseUntil = claimedAt + claimTtlMs
      const claim: Claim = {
        value: JSON.stringify({ v: VERSION, state: 'in-flight', fingerprint, owner: randomUUID(), leaseUntil }),
        fingerprint,
        leaseUntil,
        claimedAt
      }
      let reply
      try {
        reply = await scripts.stateClaim(key, claim.value, ttlMs)
      } catch (error) {
        connection.noteError(error)
        // It may have been written all the same (a reply lost, a frozen Redis that runs it later): free it.
        discard(key, claim)
        throw unavailable(error)
      }
      if (reply[0] === 1) {
        // Every replica, not one: a Sentinel may promote any of them, and one that is
        // being promoted has already stopped taking this master's writes.
        const replicas = ackTimeoutMs > 0 ? connection.replicas() : 0
        if (replicas > 0) {
          const acked = await client.wait(replicas, ackTimeoutMs).catch(() => 0)
          if (acked < replicas) {
            discard(key, claim)
            throw unavailable(new Error(`${acked} of ${replicas} replicas acknowledged within ${ackTimeoutMs} ms`), 'the idempotency claim did not reach the Redis replicas in time')
          }
        }
        claims.set(callerKey, claim)
        return { state: 'acquired' }
      }
      const [, held, pttl] = reply
      const value = decode(held)
      // Written by another version of the gateway: refuse rather than guess.
      if (value === undefined) throw new StateUnavailableError('the idempotency key holds a value this version cannot read')
      if (value.fingerprint !== fingerprint) return { state: 'mismatch' }
      if (value.state === 'completed') return { state: 'completed', response: value.response }
      if (value.state === 'unknown') return { state: 'unknown' }
      if (value.leaseUntil === undefined) return { state: 'in-flight', settled: settled(key, held, pttl) }
      const left = value.leaseUntil - Date.now()
      if (left <= 0) return { state: 'unknown' }
      return { state: 'in-flight', settled: settled(key, held, left) }
    },
    async complete (callerKey, response) {
      const claim = claims.get(callerKey)
      if (claim === undefined) return
      claims.delete(callerKey)
      const value = JSON.stringify({ v: VERSION, state: 'completed', fingerprint: claim.fingerprint, response })
      await settle('complete', claim, replace(idempotencyKey(callerKey), claim, value))
    },
    async release (callerKey) {
      const claim = claims.get(callerKey)
      if (claim === undefined) return
      claims.delete(callerKey)
      const key = idempotencyKey(callerKey)
      await settle('release', claim, () => scripts.stateRelease(key, claim.value))
    },
    async abandon (callerKey) {
      const claim = claims.get(callerKey)
      if (claim === undefined) return
      claims.delete(callerKey)
      const value = JSON.stringify({ v: VERSION, state: 'unknown', fingerprint: claim.fingerprint })
      await settle('abandon', claim, replace(idempotencyKey(callerKey), claim, value))
    },
    async size () {
      // SCAN patterns get no key prefix from ioredis: it is added here.
      let count = 0
      try {
        for await (const keys of client.scanStream({ match: `${connection.keyPrefix}idempotency:*`, count: 1000 })) {
          count += (keys as string[]).length
        }
      } catch (error) {
        throw unavailable(error)
      }
      return count
    },
    pending: () => retrying.size
  }
}
