import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import type { RateLimitStoreClass } from '../types.ts'

/** What the plugin passes to `new Store()`: its merged settings. */
interface StoreParams { continueExceeding?: boolean, exponentialBackoff?: boolean }

/**
 * This process's counting: @fastify/rate-limit's own LocalStore, as the
 * plugin makes it when it is given no store, with `cache` keys at most (the
 * plugin does not pass its `cache` option to a store of the `store` option).
 * LocalStore reads the wall clock itself (Date.now).
 */
export function createMemoryRateLimitStore ({ cache }: { cache: number }): RateLimitStoreClass {
  return class MemoryRateLimitStore extends LocalStore {
    constructor (params: StoreParams) {
      super(params.continueExceeding === true, params.exponentialBackoff === true, cache)
    }
  }
}
