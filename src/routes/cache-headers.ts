import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CallResult } from '../upstream/client.ts'

/** docs/api.md#caching-etag-and-304: a caller's `cache-control: no-cache` asks the hub afresh. */
export function wantsFresh (request: FastifyRequest): boolean {
  const header = request.headers['cache-control']
  return (
    (typeof header === 'string' && /(^|,)\s*no-(cache|store)\s*(,|$)/i.test(header)) ||
    request.headers.pragma === 'no-cache'
  )
}

type CacheInfo = NonNullable<CallResult['cache']>

/**
 * `cache-control` (and `age`) from how the answers relate to the cache: the
 * caller may reuse an answer for what is left of its TTL; stale answers and
 * uncached lookups must not be reused.
 */
export function setCacheHeaders (
  reply: FastifyReply,
  infos: ReadonlyArray<CacheInfo | undefined>
): { cached: boolean; stale: boolean } {
  // One loop, no arrays: every lookup runs it.
  let known = 0
  let stale = false
  let cached = true
  let remaining = Number.POSITIVE_INFINITY
  let age = Number.NEGATIVE_INFINITY
  for (const info of infos) {
    if (info === undefined) continue
    known++
    if (info.stale) stale = true
    if (!info.cached) cached = false
    remaining = Math.min(remaining, info.ttlSeconds - info.ageSeconds)
    age = Math.max(age, info.ageSeconds)
  }
  cached &&= known > 0
  if (known === 0 || stale || !(remaining > 0)) {
    reply.header('cache-control', stale ? 'private, max-age=0, must-revalidate' : 'no-store')
  } else {
    reply.header('cache-control', `private, max-age=${remaining}`)
  }
  if (cached) reply.header('age', String(age))
  return { cached, stale }
}
