import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CallResult } from '../upstream/client.ts'

/** docs/api.md#the-envelope: a caller's `cache-control: no-cache` asks the hub afresh. */
export function wantsFresh (request: FastifyRequest): boolean {
  const header = request.headers['cache-control']
  return (typeof header === 'string' && /(^|,)\s*no-(cache|store)\s*(,|$)/i.test(header)) || request.headers.pragma === 'no-cache'
}

type CacheInfo = NonNullable<CallResult['cache']>

/**
 * `cache-control` (and `age`) from how the answers relate to the cache: the
 * caller may reuse an answer for what is left of its TTL; stale answers and
 * uncached lookups must not be reused.
 */
export function setCacheHeaders (reply: FastifyReply, infos: ReadonlyArray<CacheInfo | undefined>): { cached: boolean, stale: boolean } {
  const known = infos.filter((info): info is CacheInfo => info !== undefined)
  const stale = known.some(info => info.stale)
  const cached = known.length > 0 && known.every(info => info.cached)
  const remaining = Math.min(...known.map(info => info.ttlSeconds - info.ageSeconds))
  if (known.length === 0 || stale || !(remaining > 0)) {
    reply.header('cache-control', stale ? 'private, max-age=0, must-revalidate' : 'no-store')
  } else {
    reply.header('cache-control', `private, max-age=${remaining}`)
  }
  if (cached) reply.header('age', String(Math.max(...known.map(info => info.ageSeconds))))
  return { cached, stale }
}
