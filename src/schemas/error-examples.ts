import { gatewayError, reasonPhrase, type ErrorCode, type ErrorExtras } from '../errors.ts'

/**
 * The error examples of the OpenAPI document: for each status a route can
 * answer, the codes it answers it with, each an envelope built by the error
 * table itself (so its message is the one a caller gets). Swagger UI shows
 * them by code. A route's 400 VALIDATION_FAILED example is its own, recorded
 * from the gateway (answer-examples.json); a route's 403 names its scope.
 */

/** The request id of every example: a fixed one, so the document is stable. */
export const EXAMPLE_REQUEST_ID = '5b0b7c1e-0d5f-4b8e-9a51-2f4f1d3c9e01'

export interface ErrorExample {
  code: ErrorCode
  extras?: ErrorExtras
  args?: unknown[]
  summary: string
  /**
   * Every route gives its own (its 400 VALIDATION_FAILED, its scope's 403): not shared in
   * components.
   */
  perRoute?: boolean
}

const BY_STATUS: Record<number, ErrorExample[]> = {
  400: [
    {
      code: 'VALIDATION_FAILED',
      perRoute: true,
      args: [
        'query.npwp must be a taxpayer number of 15 or 16 digits (dots and dashes are allowed ' +
        'and ignored)'
      ],
      extras: {
        details: [
          {
            field: 'query.npwp',
            rule: 'must be a taxpayer number of 15 or 16 digits (dots and dashes are allowed and ' +
              'ignored)'
          }
        ]
      },
      summary: 'The request breaks a rule'
    },
    {
      code: 'UPSTREAM_REJECTED',
      extras: { statusCode: 400, upstreamMessage: 'Parameter tidak valid' },
      summary: 'The hub refused the request as invalid (400)'
    }
  ],
  401: [{ code: 'UNAUTHORIZED', summary: 'No client key, or an unknown one' }],
  403: [
    {
      code: 'FORBIDDEN',
      perRoute: true,
      args: ['customs:read'],
      summary: "The client lacks the route's scope"
    }
  ],
  404: [
    {
      code: 'UPSTREAM_NOT_FOUND',
      extras: { upstreamMessage: 'Data tidak ditemukan' },
      summary: 'The hub has no such document'
    }
  ],
  409: [
    {
      code: 'OUTCOME_UNKNOWN',
      summary:
        'An earlier request with the Idempotency-Key may have reached the hub, and its answer ' +
        'was lost: not sent again'
    }
  ],
  413: [{ code: 'PAYLOAD_TOO_LARGE', args: ['64 KiB'], summary: 'The body is over 64 KiB' }],
  415: [{ code: 'UNSUPPORTED_MEDIA_TYPE', summary: 'The body is not JSON' }],
  422: [
    {
      code: 'UPSTREAM_REJECTED',
      extras: { upstreamMessage: 'Booking request sudah ditutup' },
      summary: 'The hub refused the request (another 4xx)'
    },
    {
      code: 'IDEMPOTENCY_KEY_REUSED',
      summary: 'The Idempotency-Key was used with a different request'
    }
  ],
  426: [{ code: 'UPGRADE_REQUIRED', summary: 'A plain GET of the WebSocket route' }],
  429: [{ code: 'RATE_LIMITED', summary: 'The client is over its rate limit (see retry-after)' }],
  500: [{ code: 'INTERNAL', summary: 'A bug in the gateway' }],
  502: [
    {
      code: 'UPSTREAM_UNAVAILABLE',
      extras: { upstreamMessage: 'Internal Server Error' },
      summary: 'The hub failed or dropped the connection'
    },
    {
      code: 'UPSTREAM_AUTH_FAILED',
      extras: { upstreamMessage: 'Token tidak valid' },
      summary: "The hub refused the gateway's own credentials"
    },
    { code: 'UPSTREAM_BAD_RESPONSE', summary: 'The hub answered something unreadable' }
  ],
  503: [
    {
      code: 'UPSTREAM_UNAVAILABLE',
      extras: { statusCode: 503 },
      summary:
        'The hub is unavailable or limits the gateway, or its circuit is open (see retry-after)'
    },
    { code: 'OVERLOADED', summary: 'The gateway sheds load (retry-after: 5)' },
    {
      code: 'IDEMPOTENCY_UNAVAILABLE',
      summary:
        'A write with an Idempotency-Key while the shared store is unreachable: nothing sent to ' +
        'the hub (retry-after: 2)'
    },
    {
      code: 'EVENTS_UNAVAILABLE',
      summary:
        'An event-stream ticket cannot be issued or checked while the shared store is ' +
        'unreachable (retry-after: 2)'
    },
    { code: 'SHUTTING_DOWN', summary: 'The gateway is closing (retry-after: 1)' }
  ],
  504: [{ code: 'UPSTREAM_TIMEOUT', summary: 'The hub did not answer in time' }]
}

/** Codes only a write with an Idempotency-Key is answered with. */
const WRITE_ONLY = new Set<ErrorCode>([
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_UNAVAILABLE',
  'OUTCOME_UNKNOWN'
])

/** The envelope of one example, as the error handler would send it. */
export function errorEnvelope (example: ErrorExample): Record<string, unknown> {
  const error = gatewayError(example.code, example.extras ?? {}, ...(example.args ?? []))
  return {
    statusCode: error.statusCode,
    code: error.code,
    error: reasonPhrase(error.statusCode),
    message: error.message,
    requestId: EXAMPLE_REQUEST_ID,
    ...(error.upstreamMessage === undefined ? {} : { upstreamMessage: error.upstreamMessage }),
    ...(error.details === undefined ? {} : { details: error.details })
  }
}

export interface ExampleOptions {
  /**
   * A write route: its 409 is OUTCOME_UNKNOWN, its 422 may be IDEMPOTENCY_KEY_REUSED too, its 503
   * IDEMPOTENCY_UNAVAILABLE.
   */
  write?: boolean
  /** Only these codes (a route that answers a status with fewer of them). */
  codes?: readonly ErrorCode[]
  /** The route's own envelope for a code (its 400 VALIDATION_FAILED, its scope's 403). */
  own?: Partial<Record<ErrorCode, Record<string, unknown>>>
}

type NamedExample = { summary: string, value: Record<string, unknown> } | { $ref: string }

/** The name of a status's example of a code in `components.examples`. */
function componentName (status: number, code: ErrorCode): string {
  return `${status}-${code}`
}

/** Every error example, once, for `components.examples`: the routes refer to them. */
export function errorExampleComponents (): Record<
  string,
  { summary: string; value: Record<string, unknown> }
> {
  const out: Record<string, { summary: string; value: Record<string, unknown> }> = {}
  for (const [status, examples] of Object.entries(BY_STATUS)) {
    for (const example of examples) {
      if (example.perRoute !== true) {
        out[componentName(Number(status), example.code)] = {
          summary: example.summary,
          value: errorEnvelope(example)
        }
      }
    }
  }
  return out
}

/** The examples of one status, by code: references to the shared ones, or the route's own. */
export function errorExamples (
  status: number,
  { write = false, codes, own = {} }: ExampleOptions = {}
): Record<string, NamedExample> {
  const out: Record<string, NamedExample> = {}
  for (const example of BY_STATUS[status] ?? []) {
    if (WRITE_ONLY.has(example.code) && !write) continue
    // Answered by the event-stream ticket routes only, which name it.
    if (example.code === 'EVENTS_UNAVAILABLE' && codes?.includes(example.code) !== true) continue
    if (codes !== undefined && !codes.includes(example.code)) continue
    const value =
      own[example.code] ?? (example.perRoute === true ? errorEnvelope(example) : undefined)
    out[example.code] =
      value === undefined
        ? { $ref: `#/components/examples/${componentName(status, example.code)}` }
        : { summary: example.summary, value }
  }
  return out
}
