import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type {
  RateLimitCallback as Callback,
  RateLimitStore,
  RateLimitStoreClass
} from '../types.ts'
import { redisReason, type RedisConnection } from './connection.ts'

/**
 * Where the counters live: `<prefix>rate-limit:v1:<limit key>`. They are the
 * plugin's own (an integer per key, PEXPIRE'd to the window); the `v1` names
 * their format, which a change would move to another namespace.
 */
export const RATE_LIMIT_NAMESPACE = 'rate-limit:v1:'

/**
 * What the plugin passes to `new Store()` and `child()`: its merged settings (and, for a route,
 * `routeInfo`).
 */
interface StoreParams {
  continueExceeding?: boolean
  exponentialBackoff?: boolean
  cache?: number
}

/**
 * A @fastify/rate-limit `store` class (the plugin instantiates it with its
 * settings and calls `child()` for route limits) that counts with the
 * plugin's own RedisStore, so a client's limit holds across replicas. While
 * Redis is down or fails a count, the plugin's own LocalStore counts in
 * this replica instead: each replica then enforces the limit on its own
 * (never unlimited), and counting goes back to Redis as soon as it answers.
 * Counts made locally during an outage are not carried over.
 */
export interface RedisRateLimitStoreOptions {
  /**
   * Keys the local fallback counts at most (an LRU), as the plugin's own
   * `cache` option, which it does not pass to a custom store (default 5000).
   */
  cache?: number
}

export function createRedisRateLimitStore (
  connection: RedisConnection,
  options: RedisRateLimitStoreOptions = {}
): RateLimitStoreClass {
  const { scripts, log } = connection
  // What the plugin's RedisStore calls: its two scripts, run as the gateway's
  // Redis functions (functions.ts) instead of the EVALSHA/EVAL of defineCommand.
  const counter: ConstructorParameters<typeof RedisStore>[2] = {
    rateLimit (key, timeWindow, max, continueExceeding, exponentialBackoff, callback) {
      scripts.rateLimit(key, timeWindow, max, continueExceeding, exponentialBackoff).then(
        (result) => callback(null, result),
        (error: Error) => callback(error)
      )
    },
    rateLimitRead (key, callback) {
      scripts.rateLimitRead(key).then(
        (result) => callback(null, result),
        (error: Error) => callback(error)
      )
    }
  }
  // One flag for all routes' stores: the fallback is logged once per outage.
  let local = false

  function fallBack (error: unknown) {
    if (local) return
    local = true
    log.warn(
      { reason: redisReason(error) },
      'rate limits: Redis unavailable, counting in this replica'
    )
  }

  class SharedRateLimitStore implements RateLimitStore {
    readonly #redis: RedisStore
    readonly #local: LocalStore

    constructor (params: StoreParams, parts?: { redis: RedisStore; local: LocalStore }) {
      const continueExceeding = params.continueExceeding === true
      const exponentialBackoff = params.exponentialBackoff === true
      this.#redis =
        parts?.redis ??
        new RedisStore(continueExceeding, exponentialBackoff, counter, RATE_LIMIT_NAMESPACE)
      this.#local =
        parts?.local ??
        new LocalStore(continueExceeding, exponentialBackoff, params.cache ?? options.cache)
    }

    #count (
      method: 'incr' | 'read',
      key: string,
      callback: Callback,
      timeWindow: number,
      max: number
    ) {
      // Counting is a write: a Redis that refuses writes counts nothing either.
      if (connection.health() !== 'up') {
        fallBack(new Error(`redis is ${connection.health()}`))
        this.#local[method](key, callback, timeWindow, max)
        return
      }
      this.#redis[method](
        key,
        (error, result) => {
          if (error !== null || result == null) {
            connection.noteError(error)
            fallBack(error)
            this.#local[method](key, callback, timeWindow, max)
            return
          }
          if (local) {
            local = false
            log.info('rate limits: counting in Redis again')
          }
          callback(null, result)
        },
        timeWindow,
        max
      )
    }

    incr (key: string, callback: Callback, timeWindow: number, max: number) {
      this.#count('incr', key, callback, timeWindow, max)
    }

    read (key: string, callback: Callback, timeWindow: number, max: number) {
      this.#count('read', key, callback, timeWindow, max)
    }

    // The plugin's types name the route's options; it passes its merged settings.
    child (routeOptions: object) {
      return new SharedRateLimitStore(routeOptions as StoreParams, {
        redis: this.#redis.child(routeOptions),
        local: this.#local.child(routeOptions)
      })
    }
  }

  return SharedRateLimitStore
}
