import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type, type TSchema } from '../typebox.ts'

/**
 * Conditional requests on the lookups (RFC 9110 13.1.2): each answer has a
 * strong entity tag over its `data` (upstream/entity-tag.ts), and a request
 * whose `If-None-Match` names it is answered 304 without a body. The tag is
 * the hub answer's, kept with it in the cache: a fresh cache entry answers
 * a 304 without a hub call and without hashing anything.
 *
 * `cache-control: no-cache` still asks the hub afresh (docs/api.md#caching-etag-and-304); the
 * tag is then compared with the fresh answer's, so a page that polls with
 * no-cache learns that the hub's data did not change for the price of the
 * headers. Written here rather than taken from `fresh` (jshttp), which
 * answers every no-cache request in full, and from @fastify/etag, which
 * hashes every response as it is sent.
 */

export const IF_NONE_MATCH = 'if-none-match'

export const ConditionalHeadersSchema = Type.Object({
  // Text (no control or format characters), not a strict entity-tag grammar: a tag this gateway did
  // not make simply does not match.
  [IF_NONE_MATCH]: Type.Optional(
    Type.String({
      format: 'text',
      maxLength: 1024,
      description:
        'The `ETag` of an answer you hold (or several, comma-separated, or `*`): when the ' +
        "answer's data is still the same, " +
        'the answer is 304 Not Modified without a body. A fresh cached answer makes no hub call ' +
        'for it; with `cache-control: no-cache` ' +
        'the hub is asked afresh and its answer compared.'
    })
  )
})

const ETAG_HEADER = {
  etag: {
    type: 'string',
    description:
      "Strong entity tag of the answer's `data` (`meta` is not part of it): send it back in " +
      '`If-None-Match` to be answered 304 while the data is the same'
  }
}

/** The 200 response with its `ETag` header, and the 304, for a route's response schemas. */
export function conditionalResponses (ok: TSchema): Record<number, unknown> {
  return {
    200: { ...ok, headers: ETAG_HEADER },
    304: {
      type: 'null',
      description:
        "Not Modified: the answer's data is the one `If-None-Match` named. No body; `ETag`, " +
        '`cache-control` and `age` as a 200 would have them.',
      headers: ETAG_HEADER
    }
  }
}

/** Entity tags as a header lists them: quoted, with or without `W/`. */
const TAG = /(?:W\/)?"[^"]*"/g

/**
 * Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110 13.1.2 asks of it) or is `*`.
 */
export function matches (header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  for (const [tag] of header.matchAll(TAG)) if (tag.replace(/^W\//, '') === etag) return true
  return false
}

/**
 * Sets `ETag` and, when the caller already holds this answer, sends the 304
 * and says so: the route then sends nothing else. `cache-control` and `age`
 * are set before, as for the 200.
 */
export function notModified (request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  reply.header('etag', etag)
  if (!matches(request.headers[IF_NONE_MATCH], etag)) return false
  reply.code(304).send()
  return true
}
