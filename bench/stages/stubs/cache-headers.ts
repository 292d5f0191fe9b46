// Stage `headers` (with hardening.ts): no cache-control or age header.
import type { FastifyRequest } from 'fastify'

export function wantsFresh (request: FastifyRequest): boolean {
  return request.headers['cache-control'] === 'no-cache'
}

export function setCacheHeaders (): { cached: boolean, stale: boolean } {
  return { cached: false, stale: false }
}
