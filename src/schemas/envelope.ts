import { Type, type TSchema } from './typebox.ts'

export const ErrorEnvelopeSchema = Type.Object({
  statusCode: Type.Integer({ description: 'HTTP status, repeated' }),
  code: Type.String({ description: 'Stable error code (see the README error table)', examples: ['UPSTREAM_UNAVAILABLE'] }),
  error: Type.String({ description: 'HTTP reason phrase', examples: ['Bad Gateway'] }),
  message: Type.String({ description: 'A human sentence', examples: ['The customs hub did not answer'] }),
  requestId: Type.String({ description: 'Id of this request (also the `x-request-id` header)' }),
  upstreamMessage: Type.Optional(Type.String({ description: 'The hub\'s own message, when it answered a 4xx with one (at most 500 characters, the gateway\'s credentials scrubbed out)' })),
  details: Type.Optional(Type.Array(Type.Object({
    field: Type.String({ description: 'Where the problem is, e.g. `querystring.npwp`' }),
    rule: Type.String({ description: 'The rule the value breaks' })
  }, { additionalProperties: false }), { description: 'Validation problems, one per field' }))
}, { $id: 'ErrorEnvelope', title: 'Error envelope', description: 'Every non-2xx answer of the gateway', additionalProperties: false })

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input (VALIDATION_FAILED) or the hub rejected it (UPSTREAM_REJECTED)',
  401: 'Missing or unknown client credentials (UNAUTHORIZED)',
  403: 'The client lacks the scope (FORBIDDEN)',
  404: 'No such route (NOT_FOUND) or the hub has no such document (UPSTREAM_NOT_FOUND)',
  413: 'Request body too large (PAYLOAD_TOO_LARGE)',
  415: 'Request body is not JSON (UNSUPPORTED_MEDIA_TYPE)',
  422: 'The hub rejected the request (UPSTREAM_REJECTED)',
  429: 'Too many requests (RATE_LIMITED)',
  500: 'A gateway bug (INTERNAL)',
  502: 'The hub failed: UPSTREAM_UNAVAILABLE, UPSTREAM_AUTH_FAILED or UPSTREAM_BAD_RESPONSE',
  503: 'The hub is unavailable or rate limited the gateway (UPSTREAM_UNAVAILABLE); see `retry-after`',
  504: 'The hub did not answer in time (UPSTREAM_TIMEOUT)'
}

export const UPSTREAM_STATUSES = [400, 404, 422, 500, 502, 503, 504] as const

/** Error responses of a route: each status refers to the shared envelope. */
export function errorResponses (statuses: readonly number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const status of statuses) out[status] = Type.Ref('ErrorEnvelope', { description: STATUS_TEXT[status] ?? 'Error' })
  return out
}

const MetaSchema = Type.Object({}, { additionalProperties: false, description: 'Response metadata' })

export function dataEnvelope (data: TSchema, description: string, meta: TSchema = MetaSchema): TSchema {
  return Type.Object({ data, meta }, { additionalProperties: false, description })
}

export function recordEnvelope (itemId: string, description: string): TSchema {
  return dataEnvelope(Type.Ref(itemId), description)
}

const CacheMeta = {
  cached: Type.Boolean({ description: 'True when answered from the gateway\'s cache rather than a hub call made for this request' }),
  stale: Type.Optional(Type.Boolean({ description: 'True when the hub failed and a cached answer past its lifetime was served instead' }))
}

/** A lookup's list envelope: `meta.count` and the cache flags. */
export function lookupListEnvelope (itemId: string, description: string): TSchema {
  return dataEnvelope(
    Type.Array(Type.Ref(itemId)),
    description,
    Type.Object({ count: Type.Integer({ minimum: 0, description: 'Number of items in `data`' }), ...CacheMeta }, { additionalProperties: false, description: 'Response metadata' })
  )
}

/** A lookup's record envelope, with the cache flags. */
export function lookupRecordEnvelope (itemId: string, description: string): TSchema {
  return dataEnvelope(Type.Ref(itemId), description, Type.Object(CacheMeta, { additionalProperties: false, description: 'Response metadata' }))
}

export { ENVELOPE_HEAD, FRESH_FRAME, envelopeAround, envelopeTail, type LookupMeta } from './envelope-bytes.ts'
