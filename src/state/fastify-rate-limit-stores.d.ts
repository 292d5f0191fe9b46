// @fastify/rate-limit 11 ships its two stores without type declarations;
// these describe what state/memory/ and state/redis/ use of them, with the
// callback as the plugin's FastifyRateLimitStore declares it (on an error the
// stores pass `null` as the result).

declare module '@fastify/rate-limit/store/RedisStore.js' {
  type Reply = (error: Error | null, result?: [number, number]) => void

  /**
   * What the store calls on its `redis`: ioredis, on which it defines its two
   * scripts (defineCommand) unless `rateLimit` and `rateLimitRead` are there.
   */
  interface RedisStoreClient {
    defineCommand?(name: string, definition: { numberOfKeys: number; lua: string }): void
    rateLimit?(
      key: string,
      timeWindow: number,
      max: number,
      continueExceeding: boolean,
      exponentialBackoff: boolean,
      callback: Reply
    ): void
    rateLimitRead?(key: string, callback: Reply): void
  }

  /**
   * Counts in Redis with one Lua script (INCR, PEXPIRE on the first hit); keys are `key` + the
   * limit's key.
   */
  class RedisStore {
    constructor (
      continueExceeding: boolean,
      exponentialBackoff: boolean,
      redis: RedisStoreClient,
      key?: string
    )
    incr (
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number
    ): void
    read (
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number
    ): void
    child (routeOptions: object): RedisStore
  }
  export = RedisStore
}

declare module '@fastify/rate-limit/store/LocalStore.js' {
  /** Counts in this process, in an LRU of `cache` keys. */
  class LocalStore {
    constructor (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number)
    incr (
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number
    ): void
    read (
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number
    ): void
    child (routeOptions: object): LocalStore
  }
  export = LocalStore
}
