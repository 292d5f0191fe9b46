import { ERROR_TABLE, errors, reasonPhrase, type ErrorCode, type ErrorEntry } from '../errors.ts'
import { errorExamples } from './error-examples.ts'
import { MAX_PROBLEMS } from './problems.ts'
import { Type, type TSchema } from '../typebox.ts'

/** What `code` says, and when each code is answered, in the error table's words. */
const ENTRIES: ReadonlyArray<[string, ErrorEntry]> = Object.entries(ERROR_TABLE)
const CODE_TEXT = ['Stable error code: what went wrong, for programs. When each is answered:', '',
  ...ENTRIES.map(([code, entry]) =>
    `- \`${code}\` (${[entry.status, ...entry.also ?? []].join(', ')}): ${entry.when}`)
].join('\n')

// No examples on the properties: Swagger UI would compose one envelope from
// them and show it under every status. Each status has its own (errorResponses).
export const ErrorEnvelopeSchema = Type.Object(
  {
    statusCode: Type.Integer({ description: 'HTTP status, repeated' }),
    code: Type.Enum(Object.keys(errors) as ErrorCode[], { description: CODE_TEXT }),
    error: Type.String({ description: 'HTTP reason phrase' }),
    message: Type.String({ description: 'A human sentence' }),
    requestId: Type.String({
      description:
        'Id of this request (also the `x-request-id` header); quote it when reporting a problem'
    }),
    upstreamMessage: Type.Optional(
      Type.String({
        description:
          "The hub's own message, as it wrote it, when it refused the request (a 4xx) with one: " +
          "at most 500 characters, the gateway's credentials scrubbed out"
      })
    ),
    details: Type.Optional(
      Type.Array(
        Type.Object(
          {
            field: Type.String({
              description:
                'Where the problem is: the part of the request (`path`, `query`, `body`, ' +
                '`header`), then the field, e.g. `query.npwp`, `path.sp2Id`, `body.price`, ' +
                '`header.idempotency-key`; `body` alone for the body as a whole'
            }),
            rule: Type.String({
              description:
                'The rule the value breaks, worded from the schema, e.g. `must be a number`, `is ' +
                'required`, `is given twice; give it once`'
            })
          },
          { additionalProperties: false }
        ),
        {
          maxItems: MAX_PROBLEMS,
          description: 'Validation problems (VALIDATION_FAILED): one per field and rule, path, ' +
            `query, body and headers together, at most ${MAX_PROBLEMS}`
        }
      )
    )
  },
  {
    $id: 'ErrorEnvelope',
    title: 'Error envelope',
    description: 'Every non-2xx answer of the gateway',
    additionalProperties: false
  }
)

const EITHER = new Intl.ListFormat('en', { type: 'disjunction' })

/** A status's description: its reason phrase and the codes it is answered with. */
function statusText (status: number, codes: readonly string[]): string {
  const phrase = reasonPhrase(status)
  return codes.length === 0 ? phrase : `${phrase}: ${EITHER.format(codes)}`
}

export const UPSTREAM_STATUSES = [400, 404, 422, 500, 502, 503, 504] as const

export interface ErrorResponseOptions {
  /**
   * A write route (its 409 is OUTCOME_UNKNOWN, its 422 may be IDEMPOTENCY_KEY_REUSED, its 503
   * IDEMPOTENCY_UNAVAILABLE).
   */
  write?: boolean
  /** The codes the route answers these statuses with, where fewer than the usual. */
  codes?: readonly ErrorCode[]
}

/**
 * Error responses of a route: each status refers to the shared envelope,
 * with its own examples, one per code it is answered with (Swagger UI offers
 * them by code). `x-examples` is @fastify/swagger's way to named examples.
 * withErrorExamples gives a route's own examples to a status it answers.
 */
export function errorResponses (
  statuses: readonly number[],
  options: ErrorResponseOptions = {}
): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const status of statuses) {
    const examples = errorExamples(status, options)
    // An allOf of one, as resource fields do: @fastify/swagger keeps nothing beside a bare $ref.
    const codes = Object.keys(examples)
    out[status] = Type.Intersect([Type.Ref('ErrorEnvelope')], {
      description: statusText(status, codes),
      ...(codes.length > 0 ? { 'x-examples': examples } : {})
    })
  }
  return out
}

const MetaSchema = Type.Object(
  {},
  { additionalProperties: false, description: 'Response metadata' }
)

export function dataEnvelope (
  data: TSchema,
  description: string,
  meta: TSchema = MetaSchema
): TSchema {
  return Type.Object({ data, meta }, { additionalProperties: false, description })
}

export function recordEnvelope (itemId: string, description: string): TSchema {
  return dataEnvelope(Type.Ref(itemId), description)
}

const CacheMeta = {
  cached: Type.Boolean({
    description:
      "True when answered from the gateway's cache rather than a hub call made for this request"
  }),
  stale: Type.Optional(
    Type.Boolean({
      description:
        'True when the hub failed and a cached answer past its lifetime was served instead'
    })
  )
}

/** A lookup's list envelope: `meta.count` and the cache flags. */
export function lookupListEnvelope (itemId: string, description: string): TSchema {
  return dataEnvelope(
    Type.Array(Type.Ref(itemId)),
    description,
    Type.Object(
      {
        count: Type.Integer({ minimum: 0, description: 'Number of items in `data`' }),
        ...CacheMeta
      },
      { additionalProperties: false, description: 'Response metadata' }
    )
  )
}

/** A lookup's record envelope, with the cache flags. */
export function lookupRecordEnvelope (itemId: string, description: string): TSchema {
  return dataEnvelope(
    Type.Ref(itemId),
    description,
    Type.Object(CacheMeta, { additionalProperties: false, description: 'Response metadata' })
  )
}

export {
  ENVELOPE_HEAD,
  FRESH_FRAME,
  envelopeAround,
  envelopeTail,
  type LookupMeta
} from './envelope-bytes.ts'

/** A status's error response with other examples (a route's own 400, its scope's 403). */
export function withErrorExamples (response: unknown, examples: Record<string, unknown>): unknown {
  return typeof response === 'object' && response !== null
    ? { ...response, 'x-examples': examples }
    : response
}
