import { createHash, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { IdempotencyStore, StoredResponse } from '../types.ts'
import { StateUnavailableError } from '../errors.ts'
import { redisReason, type RedisConnection } from './connection.ts'
import { parseVersioned } from './versioned.ts'

export interface RedisIdempotencyOptions {
  connection: RedisConnection
  /** How long a completed answer is replayed (IDEMPOTENCY_TTL_SECONDS). */
  ttlMs: number
  /**
   * How long a claim holds the key without an answer: the bound on a crashed
   * replica's claim. About the request deadline plus a margin.
   */
  claimTtlMs: number
  /** The longest one `in-flight` answer's `settled` waits before the caller asks again (default claimTtlMs). */
  waitMs?: number
}

/** Format of the values; a reader refuses any other rather than guess. */
const VERSION = 1
/** Polling a claim held elsewhere: from this interval, doubling, up to the next. */
const POLL_FIRST_MS = 10
const POLL_MAX_MS = 200

type Value =
  | { v: number, state: 'in-flight', fingerprint: string, owner: string }
  | { v: number, state: 'completed', fingerprint: string, response: StoredResponse }

/** This replica's claim on a key: the exact value it wrote, which the scripts compare. */
interface Claim { value: string, fingerprint: string, expiresAt: number }

export function idempotencyKey (key: string): string {
  return `idempotency:${createHash('sha256').update(key).digest('base64url')}`
}

function decode (text: string): Value | undefined {
  const value = parseVersioned(text, VERSION)
  if (value === undefined || typeof value.fingerprint !== 'string') return undefined
  if (value.state === 'completed' && value.response !== null && typeof value.response === 'object') return value as Value
  if (value.state === 'in-flight') return value as Value
  return undefined
}

function unavailable (error: unknown): StateUnavailableError {
  return new StateUnavailableError('the idempotency store (Redis) did not answer', { cause: new Error(redisReason(error)) })
}

/**
 * Idempotent writes shared by every replica (see IdempotencyStore). A claim
 * is one atomic script: SET NX PX, or what holds the key. Completing or
 * releasing only touches the key while it still holds this replica's own
 * claim (the exact value written), so a replica that outlived its claim
 * cannot overwrite another's. When Redis cannot answer, begin() refuses
 * (STATE_UNAVAILABLE) rather than risk a second hub write; a complete() or
 * release() that fails is retried in the background while the claim lasts,
 * so that a short outage during the hub call does not lose the answer.
 */
export function createRedisIdempotencyStore (options: RedisIdempotencyOptions): IdempotencyStore {
  const { connection, ttlMs, claimTtlMs } = options
  const waitMs = options.waitMs ?? claimTtlMs
  const { client, scripts, log } = connection
  const claims = new Map<string, Claim>()

  /** Resolves when the claim `held` no longer holds the key, or after waitMs, or when Redis fails. */
  async function settled (key: string, held: string, pttl: number): Promise<void> {
    // Just past the claim's expiry, so that the last poll finds it gone.
    const deadline = Date.now() + Math.min(waitMs, pttl >= 0 ? pttl + POLL_FIRST_MS : waitMs)
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
   * Runs a settling script. When Redis fails, the answer has been sent all
   * the same: the script is retried in the background while the claim lasts.
   */
  async function settle (what: string, claim: Claim, run: () => Promise<number>): Promise<void> {
    try {
      if (connection.health() === 'down') throw new Error('redis is down')
      if (await run() === 0) log.warn(`idempotency: ${what} found the key claimed by another request (this claim had expired)`)
    } catch (error) {
      log.warn({ reason: redisReason(error) }, `idempotency: ${what} failed; retrying while the claim lasts`)
      retry(what, claim, run, 100, error)
    }
  }

  function retry (what: string, claim: Claim, run: () => Promise<number>, delay: number, error: unknown) {
    if (Date.now() + delay >= claim.expiresAt) {
      log.error({ reason: redisReason(error) }, `idempotency: ${what} failed; the claim expires unsettled`)
      return
    }
    setTimeout(() => {
      run().then(
        () => log.info(`idempotency: ${what} succeeded on a retry`),
        (next: unknown) => retry(what, claim, run, Math.min(delay * 2, 1000), next)
      )
    }, delay).unref()
  }

  return {
    async begin (callerKey, fingerprint) {
      if (connection.health() === 'down') throw unavailable(new Error('redis is down'))
      const key = idempotencyKey(callerKey)
      const claim: Claim = {
        value: JSON.stringify({ v: VERSION, state: 'in-flight', fingerprint, owner: randomUUID() }),
        fingerprint,
        expiresAt: Date.now() + claimTtlMs
      }
      let reply
      try {
        reply = await scripts.stateClaim(key, claim.value, claimTtlMs)
      } catch (error) {
        throw unavailable(error)
      }
      if (reply[0] === 1) {
        claims.set(callerKey, claim)
        return { state: 'acquired' }
      }
      const [, held, pttl] = reply
      const value = decode(held)
      // Written by another version of the gateway: refuse rather than guess.
      if (value === undefined) throw new StateUnavailableError('the idempotency key holds a value this version cannot read')
      if (value.fingerprint !== fingerprint) return { state: 'mismatch' }
      if (value.state === 'completed') return { state: 'completed', response: value.response }
      return { state: 'in-flight', settled: settled(key, held, pttl) }
    },
    async complete (callerKey, response) {
      const claim = claims.get(callerKey)
      if (claim === undefined) return
      claims.delete(callerKey)
      const value = JSON.stringify({ v: VERSION, state: 'completed', fingerprint: claim.fingerprint, response })
      const key = idempotencyKey(callerKey)
      await settle('complete', claim, () => scripts.stateSettle(key, claim.value, value, ttlMs))
    },
    async release (callerKey) {
      const claim = claims.get(callerKey)
      if (claim === undefined) return
      claims.delete(callerKey)
      const key = idempotencyKey(callerKey)
      await settle('release', claim, () => scripts.stateRelease(key, claim.value))
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
    }
  }
}
