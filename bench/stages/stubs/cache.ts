// Stage `cache-policy`: the hub call's answer, nothing kept, no coalescing.
import { originalOf } from '../original.ts'
import type { CachePolicy } from '../../../src/upstream/policies/cache.ts'

const { resultOf } = await import(originalOf('upstream/answer.js')) as typeof import('../../../src/upstream/answer.ts')

export function createCachePolicy (): CachePolicy {
  return {
    key: (_caller, path) => path,
    wouldCall: () => true,
    lookup: async (op, _key, _fresh, _log, fetch) => resultOf(await fetch(), { cached: false, stale: false, ageSeconds: 0, ttlSeconds: op.cacheTtlSeconds }),
    usage: () => ({ entries: 0, bytes: 0, failures: 0 }),
    close () {}
  }
}
